/**
 * Many concurrent sessions on coordinator processes (the compiled build, started as deployed):
 * what a run costs the coordinator, the tool workers and Redis in CPU and memory, how
 * `/healthz` answers while loaded, and the wall time against the ideal. Each session's one
 * request makes one model call asking for two parallel tool calls, then a second model call
 * that answers. The loads, one after the other on the same Redis, model and tool workers:
 *
 * - the bulk shape (one `queue.addBulk`, tools that report nothing) on a coordinator with
 *   `YIEM_COORDINATOR_CONCURRENCY` at the session count, then on one of the default;
 * - the sends shape: separate `YiemClient.send` calls from a client process of its own, tools
 *   that report one partial result each, on a coordinator of the session count;
 * - the bulk shape on two coordinators at once (past one coordinator);
 * - runs of a named agent (`YIEM_AGENTS`) against unnamed runs, in alternating blocks on one
 *   coordinator.
 *
 * Then the raw parts of a run are measured alone (`anchors.ts`) to relate the coordinator's
 * CPU per run to them.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { readClusterConfig } from "@yiem/core";
import { monotonicMs } from "../sampling/clock.js";
import {
  countBusyCores,
  type ProcessGroups,
  processCpuMs,
  readGroupCpuMs,
  readMachineTicks,
  startRssSampler,
  subtractCpu,
} from "../sampling/processSampler.js";
import {
  type CommandstatsPerRun,
  commandstatsPerRun,
  readCommandsProcessed,
  readCommandstats,
} from "../sampling/redisCommands.js";
import { type Summary, summarize } from "../sampling/stats.js";
import { type Probe, startHealthProbe } from "../setup/healthProber.js";
import {
  openSessionsCluster,
  PROGRESS_INPUT,
  type SessionsCluster,
  type SessionsCoordinator,
} from "../setup/sessionsCluster.js";
import {
  type Arrival,
  type LoadOutcome,
  runSessions,
  startSessionSender,
} from "../setup/sessionsLoad.js";
import {
  type AnchorPlan,
  type BullmqAnchor,
  measureBullmqAnchor,
  measureSdkAnchor,
  pickAnchorBodies,
  type SdkAnchor,
} from "./anchors.js";

/** The input of a bulk run (its tools report nothing). */
const BULK_INPUT = "run both steps";
/** The named agent of the agents comparison (same prompt, model and tools as `default`). */
const NAMED_AGENT = "bench";

/** Sizes and bounds of the scenario. */
export interface SessionsPlan {
  /** Sessions started at once (one request each) in each measured load. */
  sessions: number;
  /** `YIEM_COORDINATOR_CONCURRENCY` of the first configuration (the other is the default). */
  concurrency: number;
  /** Compiled tool worker processes. */
  workers: number;
  /** The scripted model's delay before each answer (ms). */
  modelDelayMs: number;
  /** Sessions run on each fresh coordinator before the measured load (not measured). */
  warmupSessions: number;
  /** How often each process's RSS is sampled during the load (ms). */
  rssIntervalMs: number;
  /** How often `/healthz` is probed during the load (ms). */
  probeIntervalMs: number;
  /** How long one load may take before it is given up (ms). */
  maxLoadMs: number;
  /** Named against unnamed runs: rounds of one block of each, `sessions` runs per block. */
  agentBlocks: { rounds: number; sessions: number };
  /** The `openai` SDK alone: streamed completions against the same scripted model. */
  sdkAnchor: AnchorPlan;
  /** Plain BullMQ add/complete pairs. */
  bullmqAnchor: AnchorPlan;
  /** Plain BullMQ worker processes of the pair anchor. */
  bullmqWorkers: number;
}

/** What one kind of process cost during the load. */
export interface ProcessCost {
  /** CPU time during the load (`/proc/<pid>/stat`, user + system) per run (ms). */
  cpuMsPerRun: number;
  /** The highest RSS sampled during the load (MiB; processes of a kind summed per sample). */
  rssPeakMb: number;
}

/** How a load's requests arrive: one `addBulk`, or separate `YiemClient.send` calls. */
export type LoadShape = "bulk" | "sends";

/** One configuration's load: `sessions` runs on `coordinators` coordinators of `concurrency`. */
export interface SessionsConfiguration {
  /** How the requests arrived (absent in runs before the shapes: `bulk`). */
  shape?: LoadShape;
  /** Coordinator processes serving the load (absent in older runs: 1). */
  coordinators?: number;
  concurrency: number;
  sessions: number;
  /** Jobs that completed with the scripted final answer. */
  answered: number;
  /** Jobs that failed, answered something else, or were still open when given up. */
  unanswered: number;
  /** Chat completion requests the model received during the load, per session (2 expected). */
  modelCallsPerRun: number;
  /** Redis commands (`INFO stats` `total_commands_processed`, whole server) per run. */
  redisCommandsPerRun: number;
  /** `INFO commandstats` per run (scripts' inner commands included; absent in older runs). */
  commandstats?: CommandstatsPerRun;
  /** From the first request sent to the last job completed (ms). */
  wallMs: number;
  /** The fewest waves of runs `concurrency` allows × one run's ideal (ms). */
  slotBoundIdealMs: number;
  /** First request sent → each job's 'completed' event (ms). */
  runLatency: Summary;
  /** Every coordinator process, summed. */
  coordinator: ProcessCost;
  /** Every tool worker process, summed. */
  workers: ProcessCost;
  redis: ProcessCost;
  /** This process's CPU per run: the scripted model server and the BullMQ client (ms). */
  benchCpuMsPerRun: number;
  /** The client process's CPU per run, sends shape only (ms). */
  senderCpuMsPerRun?: number;
  /** Cores busy on average during the load, every process on the machine (`/proc/stat`). */
  machineBusyCores: number;
  /** The machine's cores. */
  cores: number;
  /** `GET /healthz` on the (first) coordinator, probes started during the load (ms). */
  healthz: Summary;
  /** Probes during the load that failed or answered non-2xx. */
  healthzFailed: number;
  /**
   * The age of the coordinator's main-loop heartbeat each probe's answer reported (ms): how
   * long the agent loop's event loop had been busy without a turn, which `/healthz` (answered
   * by the front door thread) no longer waits for.
   */
  mainLoopSilence: Summary;
  /** The coordinator's CPU per run ÷ the raw parts of a run (producer side, see `rawParts`). */
  cpuRatio: number;
}

/** One kind of run in the agents comparison, its blocks summed. */
export interface AgentRuns {
  runs: number;
  answered: number;
  /** The coordinator's CPU per run over its blocks (ms). */
  cpuMsPerRun: number;
}

/** Runs of a named agent against unnamed ones, alternating blocks on one coordinator. */
export interface AgentsComparison {
  /** The coordinator's `YIEM_COORDINATOR_CONCURRENCY`. */
  concurrency: number;
  rounds: number;
  /** Runs per block (one `addBulk`). */
  blockSessions: number;
  /** Requests without `agent` (the `default` agent of the `YIEM_AGENTS` file). */
  unnamed: AgentRuns;
  /** Requests with `agent: "bench"` (same instructions, model and tools). */
  named: AgentRuns;
  /** Named ÷ unnamed CPU per run. */
  ratio: number;
}

/** What the sessions scenario measured. */
export interface Sessions {
  modelDelayMs: number;
  /** One run's ideal wall time: two model answers one after the other (ms). */
  idealMs: number;
  /** `YIEM_COORDINATOR_CONCURRENCY`'s default, as `readClusterConfig` reads it. */
  defaultConcurrency: number;
  /** The bulk load on a coordinator of concurrency `plan.concurrency`. */
  large: SessionsConfiguration;
  /** The same load on a coordinator of the default concurrency. */
  standard: SessionsConfiguration;
  /** Separate sends from a client process, tools reporting progress (absent in older runs). */
  sends?: SessionsConfiguration;
  /** The bulk load on two coordinators of `plan.concurrency` at once (absent in older runs). */
  twoCoordinators?: SessionsConfiguration;
  /** Named against unnamed runs (absent in older runs). */
  agents?: AgentsComparison;
  sdk: SdkAnchor;
  /**
   * The same SDK sending with Yiem's `createLlmFetch`, as the coordinator's client does
   * (absent in older runs); not part of the raw parts, which are the SDK as a user runs it.
   */
  sdkYiemFetch?: SdkAnchor;
  bullmq: BullmqAnchor;
  /**
   * The raw parts of one run (CPU ms): 2 SDK calls + 2 BullMQ producer sides (add +
   * `waitUntilFinished`); in runs before the producer-side anchor, both sides (see `rawParts`).
   */
  rawPartsCpuMs: number;
}

/** The raw parts of a run, producer side and (the old figure) both sides of each pair. */
export interface RawParts {
  /** 2 × SDK per call + 2 × the BullMQ producer's CPU per job (what a coordinator does). */
  producerSide: number;
  /** 2 × SDK per call + 2 × the whole pair (producer + plain worker): the old anchor. */
  bothSides: number;
}

/** The raw parts of a run, from the anchors (so older results read the same way). */
export function rawParts(s: Pick<Sessions, "sdk" | "bullmq">): RawParts {
  return {
    producerSide: 2 * s.sdk.cpuMsPerCall + 2 * s.bullmq.producerCpuMsPerJob,
    bothSides: 2 * s.sdk.cpuMsPerCall + 2 * s.bullmq.pairCpuMsPerJob,
  };
}

/** A configuration's coordinator CPU per run ÷ the producer-side raw parts. */
export function cpuRatioOf(s: Pick<Sessions, "sdk" | "bullmq">, c: SessionsConfiguration): number {
  return c.coordinator.cpuMsPerRun / rawParts(s).producerSide;
}

type Group = "coordinator" | "workers" | "redis" | "sender";

/** What was read around and during the measured load. */
interface LoadReadings {
  outcome: LoadOutcome;
  cpuMs: Record<Group, number>;
  rssPeakMb: Record<string, number>;
  probes: Probe[];
  modelCalls: number;
  redisCommands: number;
  commandstats: CommandstatsPerRun;
  benchCpuMs: number;
  machineBusyCores: number;
}

function readOwnCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** The processes of a load, by kind. */
function groupsOf(
  cluster: SessionsCluster,
  coordinators: readonly SessionsCoordinator[],
  senderPid?: number,
): ProcessGroups<Group> {
  return {
    coordinator: coordinators.map((c) => c.process.pid),
    workers: cluster.workers.map((w) => w.pid),
    redis: [cluster.redisPid],
    sender: senderPid === undefined ? [] : [senderPid],
  };
}

/** Runs the measured load with CPU read around it, RSS sampled and `/healthz` probed during it. */
async function readLoad(
  cluster: SessionsCluster,
  groups: ProcessGroups<Group>,
  healthUrl: string,
  arrival: Arrival,
  tag: string,
  plan: SessionsPlan,
): Promise<LoadReadings> {
  const probe = await startHealthProbe(healthUrl, plan.probeIntervalMs);
  const rss = startRssSampler(groups, plan.rssIntervalMs);
  try {
    const requestsBefore = cluster.model.requests.length;
    const commandsBefore = await readCommandsProcessed(cluster.connection);
    const statsBefore = await readCommandstats(cluster.connection);
    const cpuBefore = await readGroupCpuMs(groups);
    const [machineBefore, benchBefore] = [await readMachineTicks(), readOwnCpuMs()];
    const fromMs = monotonicMs();
    const outcome = await runSessions(cluster, arrival, tag, plan.sessions, plan.maxLoadMs);
    const toMs = monotonicMs();
    const [machineAfter, benchAfter] = [await readMachineTicks(), readOwnCpuMs()];
    const cpuAfter = await readGroupCpuMs(groups);
    const statsAfter = await readCommandstats(cluster.connection);
    const commandsAfter = await readCommandsProcessed(cluster.connection);
    return {
      outcome,
      cpuMs: subtractCpu(cpuAfter, cpuBefore),
      rssPeakMb: await rss.stop(),
      probes: probe.probesIn(fromMs, toMs),
      modelCalls: cluster.model.requests.length - requestsBefore,
      redisCommands: commandsAfter - commandsBefore,
      commandstats: commandstatsPerRun(statsAfter, statsBefore, plan.sessions),
      benchCpuMs: benchAfter - benchBefore,
      machineBusyCores: countBusyCores(machineAfter, machineBefore, cpus().length),
    };
  } finally {
    await rss.stop();
    await probe.stop();
  }
}

function toProcessCost(r: LoadReadings, group: Group, sessions: number): ProcessCost {
  return { cpuMsPerRun: r.cpuMs[group] / sessions, rssPeakMb: r.rssPeakMb[group] ?? Number.NaN };
}

/** How one load was set up. */
export interface LoadSetup {
  shape: LoadShape;
  coordinators: number;
  concurrency: number;
}

/** Turns one configuration's readings into its figures (the ratio is filled in later). */
function toConfiguration(r: LoadReadings, setup: LoadSetup, plan: SessionsPlan) {
  const idealMs = 2 * plan.modelDelayMs;
  const slots = setup.concurrency * setup.coordinators;
  const figures: SessionsConfiguration = {
    ...setup,
    sessions: plan.sessions,
    answered: r.outcome.answered,
    unanswered: r.outcome.unanswered,
    modelCallsPerRun: r.modelCalls / plan.sessions,
    redisCommandsPerRun: r.redisCommands / plan.sessions,
    commandstats: r.commandstats,
    wallMs: r.outcome.wallMs,
    slotBoundIdealMs: Math.ceil(plan.sessions / slots) * idealMs,
    runLatency: summarize(r.outcome.latencies),
    coordinator: toProcessCost(r, "coordinator", plan.sessions),
    workers: toProcessCost(r, "workers", plan.sessions),
    redis: toProcessCost(r, "redis", plan.sessions),
    benchCpuMsPerRun: r.benchCpuMs / plan.sessions,
    ...(setup.shape === "sends" ? { senderCpuMsPerRun: r.cpuMs.sender / plan.sessions } : {}),
    machineBusyCores: r.machineBusyCores,
    cores: cpus().length,
    healthz: summarize(r.probes.filter((p) => p.ok).map((p) => p.ms)),
    healthzFailed: r.probes.filter((p) => !p.ok).length,
    mainLoopSilence: summarize(
      r.probes.flatMap((p) => (p.silentMs === undefined ? [] : [p.silentMs])),
    ),
    cpuRatio: Number.NaN,
  };
  return figures;
}

/** Starts `count` coordinators of `concurrency` (with `env`), one after the other. */
async function startCoordinators(
  cluster: SessionsCluster,
  count: number,
  concurrency: number,
  env: Record<string, string> = {},
): Promise<SessionsCoordinator[]> {
  const started: SessionsCoordinator[] = [];
  try {
    for (let i = 0; i < count; i++)
      started.push(await cluster.startCoordinator(concurrency, { env }));
    return started;
  } catch (err) {
    await stopCoordinators(started);
    throw err;
  }
}

async function stopCoordinators(coordinators: readonly SessionsCoordinator[]): Promise<void> {
  await Promise.all(coordinators.map((c) => c.process.stop(20_000)));
}

/**
 * Starts the coordinators of `setup`, warms them up with a few sessions, then measures the
 * load; the coordinators (and the sender of the sends shape) are stopped afterwards whatever
 * happened.
 */
export async function measureConfiguration(
  cluster: SessionsCluster,
  setup: LoadSetup,
  plan: SessionsPlan,
  progress: (text: string) => void,
): Promise<SessionsConfiguration> {
  const coordinators = await startCoordinators(cluster, setup.coordinators, setup.concurrency);
  const input = setup.shape === "sends" ? PROGRESS_INPUT : BULK_INPUT;
  const sender =
    setup.shape === "sends"
      ? await startSessionSender(cluster, plan.sessions, PROGRESS_INPUT)
      : undefined;
  try {
    const tag = `${setup.shape}-${setup.coordinators}x${setup.concurrency}`;
    const warmup: Arrival = { kind: "bulk", input };
    await runSessions(cluster, warmup, `warmup-${tag}`, plan.warmupSessions, plan.maxLoadMs);
    progress(
      `sessions: ${plan.sessions} sessions (${setup.shape}) on ${setup.coordinators} coordinator(s) of concurrency ${setup.concurrency}`,
    );
    const arrival: Arrival = sender ? { kind: "sends", sender } : { kind: "bulk", input };
    const groups = groupsOf(cluster, coordinators, sender?.pid);
    const url = `${coordinators[0]?.url}/healthz`;
    const readings = await readLoad(cluster, groups, url, arrival, tag, plan);
    return toConfiguration(readings, setup, plan);
  } finally {
    await sender?.stop();
    await stopCoordinators(coordinators);
  }
}

/** A `YIEM_AGENTS` file: `default` as the environment defines it, and `bench`, the same. */
async function writeAgentsFile(dir: string): Promise<string> {
  const agent = { instructions: "You are helpful assistant.", model: "scripted-model" };
  const file = join(dir, "agents.json");
  await writeFile(file, JSON.stringify({ agents: { default: agent, [NAMED_AGENT]: agent } }));
  return file;
}

/**
 * Runs one block of `sessions` runs (`plan.agentBlocks.sessions` unless told) and reads the
 * coordinator's CPU around it.
 */
async function runAgentBlock(
  cluster: SessionsCluster,
  pid: number,
  agent: string | undefined,
  tag: string,
  plan: SessionsPlan,
  sessions = plan.agentBlocks.sessions,
): Promise<{ answered: number; cpuMs: number }> {
  const arrival: Arrival = {
    kind: "bulk",
    input: BULK_INPUT,
    ...(agent ? { extra: { agent } } : {}),
  };
  const before = (await processCpuMs(pid)) ?? Number.NaN;
  const outcome = await runSessions(cluster, arrival, tag, sessions, plan.maxLoadMs);
  const after = (await processCpuMs(pid)) ?? Number.NaN;
  return { answered: outcome.answered, cpuMs: after - before };
}

/** Adds one block's figures to a kind's running totals. */
function addBlock(total: AgentRuns, block: { answered: number; cpuMs: number }, runs: number) {
  const cpuMs = total.cpuMsPerRun * total.runs + block.cpuMs;
  const allRuns = total.runs + runs;
  return { runs: allRuns, answered: total.answered + block.answered, cpuMsPerRun: cpuMs / allRuns };
}

/**
 * Named against unnamed runs on one coordinator started with a `YIEM_AGENTS` file of two
 * identical agents (`default` and `bench`): after a warm-up of each, `rounds` rounds of one
 * block of unnamed runs and one of named runs, each block one `addBulk`.
 */
async function measureAgents(
  cluster: SessionsCluster,
  plan: SessionsPlan,
  progress: (text: string) => void,
): Promise<AgentsComparison> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-bench-agents-"));
  const env = { YIEM_AGENTS: await writeAgentsFile(dir) };
  const [coordinator] = await startCoordinators(cluster, 1, plan.concurrency, env);
  if (!coordinator) throw new Error("no coordinator started");
  try {
    const { rounds, sessions } = plan.agentBlocks;
    progress(`sessions: ${rounds} rounds of ${sessions} unnamed and ${sessions} named runs`);
    const pid = coordinator.process.pid;
    const warm = plan.warmupSessions;
    await runAgentBlock(cluster, pid, undefined, "agents-warmup-unnamed", plan, warm);
    await runAgentBlock(cluster, pid, NAMED_AGENT, "agents-warmup-named", plan, warm);
    let unnamed: AgentRuns = { runs: 0, answered: 0, cpuMsPerRun: 0 };
    let named: AgentRuns = { runs: 0, answered: 0, cpuMsPerRun: 0 };
    for (let round = 1; round <= rounds; round++) {
      const a = await runAgentBlock(cluster, pid, undefined, `agents-unnamed-${round}`, plan);
      unnamed = addBlock(unnamed, a, sessions);
      const b = await runAgentBlock(cluster, pid, NAMED_AGENT, `agents-named-${round}`, plan);
      named = addBlock(named, b, sessions);
    }
    const base = { concurrency: plan.concurrency, rounds, blockSessions: sessions };
    return { ...base, unnamed, named, ratio: named.cpuMsPerRun / unnamed.cpuMsPerRun };
  } finally {
    await stopCoordinators([coordinator]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The loads of the scenario, in order (the agents comparison apart). */
interface Loads {
  large: SessionsConfiguration;
  standard: SessionsConfiguration;
  sends: SessionsConfiguration;
  twoCoordinators: SessionsConfiguration;
}

async function measureLoads(
  cluster: SessionsCluster,
  plan: SessionsPlan,
  defaultConcurrency: number,
  progress: (text: string) => void,
  afterFirst: () => Promise<void>,
): Promise<Loads> {
  const c = plan.concurrency;
  const measure = (setup: LoadSetup) => measureConfiguration(cluster, setup, plan, progress);
  const large = await measure({ shape: "bulk", coordinators: 1, concurrency: c });
  await afterFirst();
  const standard = await measure({
    shape: "bulk",
    coordinators: 1,
    concurrency: defaultConcurrency,
  });
  const sends = await measure({ shape: "sends", coordinators: 1, concurrency: c });
  const twoCoordinators = await measure({ shape: "bulk", coordinators: 2, concurrency: c });
  return { large, standard, sends, twoCoordinators };
}

/** One round of the SDK anchors: the SDK as a user runs it, then with Yiem's fetch. */
interface SdkRound {
  sdk: SdkAnchor;
  sdkYiemFetch: SdkAnchor;
}

/**
 * Measures the `openai` SDK alone against the cluster's model, with the bodies it recorded:
 * with its default fetch, then with Yiem's (`createLlmFetch`).
 */
async function measureSdk(cluster: SessionsCluster, plan: SessionsPlan): Promise<SdkRound> {
  const bodies = pickAnchorBodies(cluster.model.requests);
  const sdk = await measureSdkAnchor(cluster, bodies, plan.sdkAnchor);
  const sdkYiemFetch = await measureSdkAnchor(cluster, bodies, plan.sdkAnchor, "yiem");
  return { sdk, sdkYiemFetch };
}

/**
 * The SDK anchor of the run: the mean of its two rounds, one between the loads and one after
 * them, so a machine that drifts during the scenario weighs on the anchor as on the loads.
 */
export function meanSdkAnchor(rounds: SdkAnchor[]): SdkAnchor {
  const mean = (pick: (a: SdkAnchor) => number) =>
    rounds.reduce((sum, a) => sum + pick(a), 0) / Math.max(1, rounds.length);
  const first = rounds[0];
  if (!first) throw new Error("no SDK anchor was measured");
  return {
    calls: rounds.reduce((sum, a) => sum + a.calls, 0),
    inFlight: first.inFlight,
    chunksPerCall: mean((a) => a.chunksPerCall),
    cpuMsPerCall: mean((a) => a.cpuMsPerCall),
    wallMs: rounds.reduce((sum, a) => sum + a.wallMs, 0),
    rounds: rounds.map((a) => a.cpuMsPerCall),
  };
}

/** Measures the raw anchors against the cluster's Redis and model (the SDK's last round). */
async function measureAnchors(cluster: SessionsCluster, plan: SessionsPlan, first: SdkRound[]) {
  const rounds = [...first, await measureSdk(cluster, plan)];
  const sdk = meanSdkAnchor(rounds.map((round) => round.sdk));
  const sdkYiemFetch = meanSdkAnchor(rounds.map((round) => round.sdkYiemFetch));
  const bullmq = await measureBullmqAnchor(cluster, plan.bullmqAnchor, plan.bullmqWorkers);
  return { sdk, sdkYiemFetch, bullmq };
}

/**
 * Runs the scenario: a cluster of compiled processes, the loads one after the other, the
 * agents comparison, then the raw anchors against the same Redis and model.
 */
export async function measureSessions(
  plan: SessionsPlan,
  progress: (text: string) => void = () => undefined,
): Promise<Sessions> {
  const defaultConcurrency = readClusterConfig({}).coordinatorConcurrency;
  const cluster = await openSessionsCluster(plan.modelDelayMs, plan.workers);
  try {
    const firstSdk: SdkRound[] = [];
    const loads = await measureLoads(cluster, plan, defaultConcurrency, progress, async () => {
      progress("sessions: the openai SDK alone, first of two rounds");
      firstSdk.push(await measureSdk(cluster, plan));
    });
    const agents = await measureAgents(cluster, plan, progress);
    progress(
      "sessions: raw anchors (openai SDK alone, second round; plain BullMQ add/complete pairs)",
    );
    const anchors = await measureAnchors(cluster, plan, firstSdk);
    const withRatio = (c: SessionsConfiguration) => ({ ...c, cpuRatio: cpuRatioOf(anchors, c) });
    return {
      modelDelayMs: plan.modelDelayMs,
      idealMs: 2 * plan.modelDelayMs,
      defaultConcurrency,
      large: withRatio(loads.large),
      standard: withRatio(loads.standard),
      sends: withRatio(loads.sends),
      twoCoordinators: withRatio(loads.twoCoordinators),
      agents,
      ...anchors,
      rawPartsCpuMs: rawParts(anchors).producerSide,
    };
  } finally {
    await cluster.close();
  }
}
