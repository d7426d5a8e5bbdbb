/**
 * Many concurrent sessions on one coordinator process (the compiled build, started as
 * deployed): what a run costs the coordinator, the tool workers and Redis in CPU and memory,
 * how `/healthz` answers while loaded, and the wall time against the ideal. Each session's one
 * request makes one model call asking for two parallel tool calls, then a second model call
 * that answers. The same load runs on a coordinator with `YIEM_COORDINATOR_CONCURRENCY` at the
 * session count and on one with the default; then the raw parts of a run are measured alone
 * (`anchors.ts`) to relate the coordinator's CPU per run to them.
 */
import { cpus } from "node:os";
import { readClusterConfig } from "@yiem/core";
import type { TestProcess } from "@yiem/testing";
import type { QueueEvents } from "bullmq";
import { spawnApp } from "../../test/support/processes.js";
import { monotonicMs, settlesWithin } from "../sampling/clock.js";
import {
  countBusyCores,
  type ProcessGroups,
  readGroupCpuMs,
  readMachineTicks,
  startRssSampler,
  subtractCpu,
} from "../sampling/processSampler.js";
import { type Summary, summarize } from "../sampling/stats.js";
import {
  openSessionsCluster,
  SESSION_ANSWER,
  type SessionsCluster,
} from "../setup/sessionsCluster.js";
import {
  type AnchorPlan,
  type BullmqAnchor,
  measureBullmqAnchor,
  measureSdkAnchor,
  pickAnchorBodies,
  type SdkAnchor,
} from "./anchors.js";

/** Sizes and bounds of the scenario. */
export interface SessionsPlan {
  /** Sessions started at once (one request each, one `queue.addBulk`). */
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
  /** The highest RSS sampled during the load (MiB; workers summed per sample). */
  rssPeakMb: number;
}

/** One configuration's load: `sessions` runs on one coordinator of `concurrency`. */
export interface SessionsConfiguration {
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
  /** From `queue.addBulk` sent to the last job completed (ms). */
  wallMs: number;
  /** The fewest waves of runs `concurrency` allows × one run's ideal (ms). */
  slotBoundIdealMs: number;
  /** `queue.addBulk` sent → each job's 'completed' event (ms). */
  runLatency: Summary;
  coordinator: ProcessCost;
  /** Every tool worker process, summed. */
  workers: ProcessCost;
  redis: ProcessCost;
  /** This process's CPU per run: the scripted model server and the BullMQ client (ms). */
  benchCpuMsPerRun: number;
  /** Cores busy on average during the load, every process on the machine (`/proc/stat`). */
  machineBusyCores: number;
  /** The machine's cores. */
  cores: number;
  /** `GET /healthz` on the coordinator, probes started during the load (ms). */
  healthz: Summary;
  /** Probes during the load that failed or answered non-2xx. */
  healthzFailed: number;
  /** The coordinator's CPU per run ÷ the raw parts of a run (`Sessions.rawPartsCpuMs`). */
  cpuRatio: number;
}

/** What the sessions scenario measured. */
export interface Sessions {
  modelDelayMs: number;
  /** One run's ideal wall time: two model answers one after the other (ms). */
  idealMs: number;
  /** `YIEM_COORDINATOR_CONCURRENCY`'s default, as `readClusterConfig` reads it. */
  defaultConcurrency: number;
  /** The load on a coordinator of concurrency `plan.concurrency`. */
  large: SessionsConfiguration;
  /** The same load on a coordinator of the default concurrency. */
  standard: SessionsConfiguration;
  sdk: SdkAnchor;
  bullmq: BullmqAnchor;
  /** The raw parts of one run: 2 SDK calls + 2 BullMQ add/complete pairs (CPU ms). */
  rawPartsCpuMs: number;
}

/** Jobs watched through one `QueueEvents` listener. */
interface RunWatch {
  settled: Promise<void>;
  /** `performance.now()` of each job's 'completed' event, answered jobs only. */
  answeredAt: number[];
  /** Jobs completed with another answer, or failed. */
  wrong(): number;
  stop(): void;
}

/** True for a job's return value carrying the scripted final answer. */
function isExpectedAnswer(returnvalue: unknown): boolean {
  const response = (returnvalue as { response?: { content?: Array<{ text?: string }> } })?.response;
  return response?.content?.[0]?.text === SESSION_ANSWER;
}

/** Watches `ids` for 'completed' and 'failed' (register before the jobs are added). */
function watchRuns(events: QueueEvents, ids: readonly string[]): RunWatch {
  const open = new Set(ids);
  const answeredAt: number[] = [];
  let wrong = 0;
  let resolve: () => void = () => undefined;
  const settled = new Promise<void>((done) => {
    resolve = done;
  });
  const settle = (jobId: string, answered: boolean) => {
    if (!open.delete(jobId)) return;
    if (answered) answeredAt.push(performance.now());
    else wrong++;
    if (open.size === 0) resolve();
  };
  const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) =>
    settle(jobId, isExpectedAnswer(returnvalue));
  const onFailed = ({ jobId }: { jobId: string }) => settle(jobId, false);
  events.on("completed", onCompleted);
  events.on("failed", onFailed);
  if (open.size === 0) resolve();
  return {
    settled,
    answeredAt,
    wrong: () => wrong,
    stop() {
      events.off("completed", onCompleted);
      events.off("failed", onFailed);
    },
  };
}

/** What one batch of sessions did. */
interface LoadOutcome {
  answered: number;
  unanswered: number;
  wallMs: number;
  latencies: number[];
}

/**
 * Starts `count` fresh sessions (no `sessionId`) with one `queue.addBulk` and waits for every
 * job's 'completed' or 'failed' event, or `maxMs`.
 */
async function runSessions(
  cluster: SessionsCluster,
  tag: string,
  count: number,
  maxMs: number,
): Promise<LoadOutcome> {
  const ids = Array.from({ length: count }, (_, i) => `${tag}-${i + 1}`);
  const watch = watchRuns(cluster.events, ids);
  const started = performance.now();
  await cluster.queue.addBulk(
    ids.map((jobId) => ({ name: "session", data: { input: "run both steps" }, opts: { jobId } })),
  );
  await settlesWithin(watch.settled, maxMs);
  watch.stop();
  const latencies = watch.answeredAt.map((at) => at - started);
  return {
    answered: latencies.length,
    unanswered: count - latencies.length,
    wallMs: Math.max(0, ...latencies),
    latencies,
  };
}

/** One `/healthz` probe: its latency and whether it answered 2xx. */
interface Probe {
  ms: number;
  ok: boolean;
}

/** A `/healthz` prober running in its own process (`bench/workers/healthProbe.ts`). */
interface HealthProbe {
  /** The probes so far that started in [`fromMs`, `toMs`] (monotonic clock). */
  probesIn(fromMs: number, toMs: number): Probe[];
  /** Stops it (again: nothing). */
  stop(): Promise<void>;
}

async function startHealthProbe(url: string, intervalMs: number): Promise<HealthProbe> {
  const child: TestProcess = spawnApp("bench/workers/healthProbe.ts", {
    BENCH_PROBE_URL: url,
    BENCH_PROBE_INTERVAL_MS: String(intervalMs),
  });
  await child.waitForLine((line) => line.includes('"probe ready"'), 30_000);
  return {
    probesIn(fromMs, toMs) {
      return child.lines
        .filter((line) => line.startsWith('{"probe"'))
        .map((line) => (JSON.parse(line) as { probe: Probe & { atMs: number } }).probe)
        .filter((p) => p.atMs >= fromMs && p.atMs <= toMs);
    },
    stop: () => child.stop(2000),
  };
}

type Group = "coordinator" | "workers" | "redis";

/** What was read around and during the measured load. */
interface LoadReadings {
  outcome: LoadOutcome;
  cpuMs: Record<Group, number>;
  rssPeakMb: Record<string, number>;
  probes: Probe[];
  modelCalls: number;
  redisCommands: number;
  benchCpuMs: number;
  machineBusyCores: number;
}

function readOwnCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function readCommandsProcessed(cluster: SessionsCluster): Promise<number> {
  const info = await cluster.connection.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** Runs the measured load with CPU read around it, RSS sampled and `/healthz` probed during it. */
async function readLoad(
  cluster: SessionsCluster,
  groups: ProcessGroups<Group>,
  healthUrl: string,
  tag: string,
  plan: SessionsPlan,
): Promise<LoadReadings> {
  const probe = await startHealthProbe(healthUrl, plan.probeIntervalMs);
  const rss = startRssSampler(groups, plan.rssIntervalMs);
  try {
    const requestsBefore = cluster.model.requests.length;
    const commandsBefore = await readCommandsProcessed(cluster);
    const cpuBefore = await readGroupCpuMs(groups);
    const [machineBefore, benchBefore] = [await readMachineTicks(), readOwnCpuMs()];
    const fromMs = monotonicMs();
    const outcome = await runSessions(cluster, tag, plan.sessions, plan.maxLoadMs);
    const toMs = monotonicMs();
    const [machineAfter, benchAfter] = [await readMachineTicks(), readOwnCpuMs()];
    const cpuAfter = await readGroupCpuMs(groups);
    const commandsAfter = await readCommandsProcessed(cluster);
    return {
      outcome,
      cpuMs: subtractCpu(cpuAfter, cpuBefore),
      rssPeakMb: await rss.stop(),
      probes: probe.probesIn(fromMs, toMs),
      modelCalls: cluster.model.requests.length - requestsBefore,
      redisCommands: commandsAfter - commandsBefore,
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

/** Turns one configuration's readings into its figures (the ratio is filled in later). */
function toConfiguration(r: LoadReadings, concurrency: number, plan: SessionsPlan) {
  const idealMs = 2 * plan.modelDelayMs;
  const figures: SessionsConfiguration = {
    concurrency,
    sessions: plan.sessions,
    answered: r.outcome.answered,
    unanswered: r.outcome.unanswered,
    modelCallsPerRun: r.modelCalls / plan.sessions,
    redisCommandsPerRun: r.redisCommands / plan.sessions,
    wallMs: r.outcome.wallMs,
    slotBoundIdealMs: Math.ceil(plan.sessions / concurrency) * idealMs,
    runLatency: summarize(r.outcome.latencies),
    coordinator: toProcessCost(r, "coordinator", plan.sessions),
    workers: toProcessCost(r, "workers", plan.sessions),
    redis: toProcessCost(r, "redis", plan.sessions),
    benchCpuMsPerRun: r.benchCpuMs / plan.sessions,
    machineBusyCores: r.machineBusyCores,
    cores: cpus().length,
    healthz: summarize(r.probes.filter((p) => p.ok).map((p) => p.ms)),
    healthzFailed: r.probes.filter((p) => !p.ok).length,
    cpuRatio: Number.NaN,
  };
  return figures;
}

/**
 * Starts a coordinator of `concurrency`, warms it up with a few sessions, then measures the
 * load; the coordinator is stopped afterwards whatever happened.
 */
async function measureConfiguration(
  cluster: SessionsCluster,
  concurrency: number,
  plan: SessionsPlan,
  progress: (text: string) => void,
): Promise<SessionsConfiguration> {
  const coordinator = await cluster.startCoordinator(concurrency);
  try {
    const tag = `c${concurrency}`;
    await runSessions(cluster, `warmup-${tag}`, plan.warmupSessions, plan.maxLoadMs);
    progress(`sessions: ${plan.sessions} sessions on a coordinator of concurrency ${concurrency}`);
    const groups: ProcessGroups<Group> = {
      coordinator: [coordinator.process.pid],
      workers: cluster.workers.map((w) => w.pid),
      redis: [cluster.redisPid],
    };
    const readings = await readLoad(cluster, groups, `${coordinator.url}/healthz`, tag, plan);
    return toConfiguration(readings, concurrency, plan);
  } finally {
    await coordinator.process.stop(20_000);
  }
}

/**
 * Runs the scenario: a cluster of compiled processes, the load on a coordinator of
 * `plan.concurrency` then on one of the default concurrency, then the raw anchors against the
 * same Redis and model.
 */
export async function measureSessions(
  plan: SessionsPlan,
  progress: (text: string) => void = () => undefined,
): Promise<Sessions> {
  const defaultConcurrency = readClusterConfig({}).coordinatorConcurrency;
  const cluster = await openSessionsCluster(plan.modelDelayMs, plan.workers);
  try {
    const large = await measureConfiguration(cluster, plan.concurrency, plan, progress);
    const standard = await measureConfiguration(cluster, defaultConcurrency, plan, progress);
    progress("sessions: raw anchors (openai SDK alone, plain BullMQ add/complete pairs)");
    const sdk = await measureSdkAnchor(
      cluster,
      pickAnchorBodies(cluster.model.requests),
      plan.sdkAnchor,
    );
    const bullmq = await measureBullmqAnchor(cluster, plan.bullmqAnchor, plan.bullmqWorkers);
    const rawPartsCpuMs = 2 * sdk.cpuMsPerCall + 2 * bullmq.pairCpuMsPerJob;
    const withRatio = (c: SessionsConfiguration) => ({
      ...c,
      cpuRatio: c.coordinator.cpuMsPerRun / rawPartsCpuMs,
    });
    return {
      modelDelayMs: plan.modelDelayMs,
      idealMs: 2 * plan.modelDelayMs,
      defaultConcurrency,
      large: withRatio(large),
      standard: withRatio(standard),
      sdk,
      bullmq,
      rawPartsCpuMs,
    };
  } finally {
    await cluster.close();
  }
}
