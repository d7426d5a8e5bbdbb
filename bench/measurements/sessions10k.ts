/**
 * Past 2,000 sessions (issue 23, goal 4), opt-in (`--only sessions10k`, a few minutes): on a
 * cluster of compiled processes of its own,
 *
 * - **live**: 10,000 sessions at once (one `queue.addBulk`) on one coordinator of concurrency
 *   10,000: all answered?, its RSS peak, `/healthz` while loaded, CPU per run, wall time;
 * - **parked**: 10,000 runs on a fresh coordinator, each calling a tool that needs approval
 *   (`gateStep`, twice in parallel), all parked at once: the coordinator's heap after full
 *   collections (through its inspector) and its RSS, before and once every call awaits
 *   approval. The parked runs are left unanswered when the cluster stops.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { clusterKeys, YiemClient } from "@yiem/core";
import { repoRoot, spawnCommand } from "../../test/support/processes.js";
import { sleep } from "../sampling/clock.js";
import { processCpuMs, readRssMb } from "../sampling/processSampler.js";
import { type CommandCounts, readCommandstats } from "../sampling/redisCommands.js";
import {
  openSessionsCluster,
  SESSION_TOOL,
  type SessionsCluster,
  type SessionsCoordinator,
} from "../setup/sessionsCluster.js";
import { runSessions } from "../setup/sessionsLoad.js";
import { measureConfiguration, type SessionsConfiguration, type SessionsPlan } from "./sessions.js";

/** The folder of the scenario's tools: `noopStep` and `gateStep` (approval always). */
const GATE_TOOLS_DIR = fileURLToPath(new URL("../setup/gateTools/", import.meta.url));
/** The input of a run that parks: the model calls `gateStep` twice. */
const PARK_INPUT = "wait for approval";

/** Sizes and bounds of the scenario. */
export interface Sessions10kPlan {
  /** Live sessions at once, and the coordinator's concurrency. */
  sessions: number;
  /** Runs parked for approval at once. */
  parked: number;
  workers: number;
  modelDelayMs: number;
  warmupSessions: number;
  rssIntervalMs: number;
  probeIntervalMs: number;
  /** How long the live load, or the parking, may take (ms). */
  maxLoadMs: number;
}

/** The coordinator's memory (MiB): heap after full collections, and RSS. */
export interface MemoryReading {
  heapUsedMb: number;
  rssMb: number;
}

/** 10,000 runs parked for approval on one coordinator. */
export interface ParkedRuns {
  runs: number;
  /** Calls awaiting approval once parked (two per run expected). */
  pendingApprovals: number;
  /** After a warm-up of runs that parked and were approved. */
  before: MemoryReading;
  /** Once every call awaits approval. */
  parked: MemoryReading;
  /** Heap held by the parked runs: parked − before (MiB). */
  heldHeapMb: number;
  /** The same per run (KiB). */
  heldHeapKbPerRun: number;
  /** RSS parked − before (MiB). */
  heldRssMb: number;
  /** From the `addBulk` to every call in the index of calls awaiting approval (ms, ±1 s). */
  parkMs: number;
  /** What the parked runs cost while nothing happens (`PARKED_IDLE_MS` after parking). */
  idle: ParkedIdle;
}

/** A coordinator's cost while its runs wait parked: its CPU, and the commands Redis served. */
export interface ParkedIdle {
  windowMs: number;
  /** The coordinator's CPU time over the window, in % of one core. */
  coordinatorCpuPercent: number;
  /** Commands Redis served a second over the window (the whole cluster's, not only its). */
  redisCommandsPerS: number;
  /** The commands of most calls over the window, with their calls a second (absent in older records). */
  topCommandsPerS?: Array<{ command: string; perS: number }>;
}

/** Calls a second of each command between two readings of `INFO commandstats`, most first. */
function commandsPerS(before: CommandCounts, after: CommandCounts, windowMs: number) {
  return [...after]
    .map(([command, calls]) => ({
      command,
      perS: ((calls - (before.get(command) ?? 0)) * 1000) / windowMs,
    }))
    .filter((c) => c.command !== "info" && c.perS > 0)
    .sort((a, b) => b.perS - a.perS);
}

/** How long the idle cost of the parked runs is read (three orphan-watch ticks and more). */
const PARKED_IDLE_MS = 15_000;

/** What the scenario measured. */
export interface Sessions10k {
  live: SessionsConfiguration;
  parked: ParkedRuns;
}

const MIB = 2 ** 20;

/** `gateStep` for `PARK_INPUT`, else `noopStep`. */
function chooseGateTool(input: string): string {
  return input === PARK_INPUT ? "gateStep" : SESSION_TOOL;
}

/** The plan of the live load, as the sessions scenario takes it. */
function livePlan(plan: Sessions10kPlan): SessionsPlan {
  return {
    sessions: plan.sessions,
    concurrency: plan.sessions,
    workers: plan.workers,
    modelDelayMs: plan.modelDelayMs,
    warmupSessions: plan.warmupSessions,
    rssIntervalMs: plan.rssIntervalMs,
    probeIntervalMs: plan.probeIntervalMs,
    maxLoadMs: plan.maxLoadMs,
    agentBlocks: { rounds: 0, sessions: 0 },
    sdkAnchor: { warmup: 0, count: 0, inFlight: 1 },
    bullmqAnchor: { warmup: 0, count: 0, inFlight: 1 },
    bullmqWorkers: 0,
  };
}

/** The `ws://` URL the coordinator's inspector printed. */
async function inspectorUrl(coordinator: SessionsCoordinator): Promise<string> {
  const line = await coordinator.process.waitForLine((l) => l.includes("ws://127.0.0.1"), 30_000);
  const url = /ws:\/\/\S+/.exec(line)?.[0];
  if (!url) throw new Error(`no inspector URL in ${line}`);
  return url;
}

/**
 * The environment of the heap reader: with `BENCH_HEAP_SNAPSHOT_DIR` set, it also writes a
 * heap snapshot there, `sessions10k-<name>.heapsnapshot`.
 */
function heapReaderEnv(url: string, name: string): Record<string, string> {
  const env: Record<string, string> = { BENCH_INSPECTOR_URL: url };
  const dir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  if (dir) env.BENCH_HEAP_SNAPSHOT = join(dir, `sessions10k-${name}.heapsnapshot`);
  return env;
}

/**
 * The coordinator's heap after full collections (`bench/workers/heapReader.ts`) and RSS;
 * `name` names its snapshot when `BENCH_HEAP_SNAPSHOT_DIR` asks for one.
 */
async function readMemory(
  coordinator: SessionsCoordinator,
  url: string,
  name: string,
): Promise<MemoryReading> {
  const reader = spawnCommand(
    [
      "node",
      "--experimental-websocket",
      "--no-warnings",
      "--import",
      "tsx",
      join(repoRoot, "bench/workers/heapReader.ts"),
    ],
    heapReaderEnv(url, name),
  );
  try {
    const line = await reader.waitForLine((l) => l.startsWith('{"heap"'), 60_000);
    const { heap } = JSON.parse(line) as { heap: { heapUsed: number } };
    return { heapUsedMb: heap.heapUsed / MIB, rssMb: await readRssMb(coordinator.process.pid) };
  } finally {
    await reader.stop(2000);
  }
}

/**
 * Waits until `count` calls are in the cluster's index of calls awaiting approval (one
 * `ZCARD` a second, so that the polling adds little to the load), then counts the calls that
 * really await approval (`pendingApprovals`, one read per call).
 */
async function waitForApprovals(
  cluster: SessionsCluster,
  client: YiemClient,
  count: number,
  maxMs: number,
): Promise<{ pending: number; indexedAt: number }> {
  const index = clusterKeys(cluster.redis.prefix).approvalsPending;
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    if ((await cluster.connection.zcard(index)) >= count) break;
    await sleep(1000);
  }
  const indexedAt = performance.now();
  return { pending: (await client.pendingApprovals()).length, indexedAt };
}

/**
 * Parks `runs` runs, approves them and waits for their answers: warms the paths up, so that
 * the baseline holds the code they compile, which is no parked run's memory.
 */
async function parkAndApprove(
  cluster: SessionsCluster,
  client: YiemClient,
  runs: number,
  maxMs: number,
) {
  const arrival = { kind: "bulk", input: PARK_INPUT } as const;
  const answered = runSessions(cluster, arrival, "park-warmup", runs, maxMs);
  await waitForApprovals(cluster, client, 2 * runs, maxMs);
  for (const call of await client.pendingApprovals())
    await client.approve(call.sessionId, call.callKey);
  await answered;
}

/** The coordinator's CPU and Redis's commands over `PARKED_IDLE_MS` while nothing happens. */
async function readParkedIdle(
  cluster: SessionsCluster,
  coordinator: SessionsCoordinator,
): Promise<ParkedIdle> {
  const pid = coordinator.process.pid;
  const [cpuBefore, commandsBefore] = [
    await processCpuMs(pid),
    await readCommandstats(cluster.connection),
  ];
  const started = performance.now();
  await sleep(PARKED_IDLE_MS);
  const [cpuAfter, commandsAfter] = [
    await processCpuMs(pid),
    await readCommandstats(cluster.connection),
  ];
  const windowMs = performance.now() - started;
  const commands = commandsPerS(commandsBefore, commandsAfter, windowMs);
  return {
    windowMs,
    coordinatorCpuPercent: (((cpuAfter ?? 0) - (cpuBefore ?? 0)) / windowMs) * 100,
    redisCommandsPerS: commands.reduce((sum, c) => sum + c.perS, 0),
    topCommandsPerS: commands.slice(0, 4),
  };
}

/** Parks `plan.parked` runs on a fresh coordinator and reads its memory before and after. */
async function measureParked(
  cluster: SessionsCluster,
  plan: Sessions10kPlan,
  progress: (text: string) => void,
): Promise<ParkedRuns> {
  const coordinator = await cluster.startCoordinator(plan.sessions, {
    nodeFlags: ["--inspect=127.0.0.1:0"],
  });
  const client = new YiemClient({ redis: cluster.redis.url, prefix: cluster.redis.prefix });
  try {
    const url = await inspectorUrl(coordinator);
    await parkAndApprove(cluster, client, plan.warmupSessions, plan.maxLoadMs);
    const before = await readMemory(coordinator, url, "before");
    progress(`sessions10k: ${plan.parked} runs parked for approval`);
    const ids = Array.from({ length: plan.parked }, (_, i) => `parked-${i + 1}`);
    const started = performance.now();
    await cluster.queue.addBulk(
      ids.map((jobId) => ({ name: "session", data: { input: PARK_INPUT }, opts: { jobId } })),
    );
    const waited = await waitForApprovals(cluster, client, 2 * plan.parked, plan.maxLoadMs);
    const [pendingApprovals, parkMs] = [waited.pending, waited.indexedAt - started];
    await sleep(2000); // the last runs' release settles
    const parked = await readMemory(coordinator, url, "parked");
    const idle = await readParkedIdle(cluster, coordinator);
    const heldHeapMb = parked.heapUsedMb - before.heapUsedMb;
    return {
      runs: plan.parked,
      pendingApprovals,
      before,
      parked,
      heldHeapMb,
      heldHeapKbPerRun: (heldHeapMb * 1024) / plan.parked,
      heldRssMb: parked.rssMb - before.rssMb,
      parkMs,
      idle,
    };
  } finally {
    await client.close();
    await coordinator.process.stop(20_000);
  }
}

/** Runs the scenario: the live load, then the parked runs, on a cluster of its own. */
export async function measureSessions10k(
  plan: Sessions10kPlan,
  progress: (text: string) => void = () => undefined,
): Promise<Sessions10k> {
  const cluster = await openSessionsCluster(plan.modelDelayMs, plan.workers, {
    toolsDir: GATE_TOOLS_DIR,
    chooseTool: chooseGateTool,
  });
  try {
    const setup = { shape: "bulk", coordinators: 1, concurrency: plan.sessions } as const;
    const live = await measureConfiguration(cluster, setup, livePlan(plan), progress);
    const parked = await measureParked(cluster, plan, progress);
    return { live, parked };
  } finally {
    await cluster.close();
  }
}
