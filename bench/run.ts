/**
 * `npm run bench`: measures Yiem's remote tool calls against plain BullMQ on one private Redis,
 * then a burst of follow-ups on a cluster of its own, then 2,000 concurrent sessions on one
 * compiled coordinator (a cluster of its own too), then runs on a 3+3 Redis Cluster with and
 * without replica acknowledgements (a cluster of its own per phase), prints a table, and writes
 * `bench/results.json` and `docs/PERFORMANCE.md`. The coordinator side of the call
 * measurements runs in this process; tool workers (Yiem and plain BullMQ alike) are child
 * processes. It prints figures; it never asserts timings.
 *
 * `npm run bench -- --only followUpBurst` (or `--only sessions`, `--only cluster`) runs that scenario alone and
 * only prints its figures (no file is written: the files always come from one full run).
 */

import type { RedisClient } from "@yiem/core";
import { connectRedis } from "@yiem/core";
import { DURABLE_CONNECTION } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "../test/support/redisServer.js";
import { loadAverage, readEnvironment } from "./environment.js";
import { type Harness, openHarness } from "./harness.js";
import { measureBreakdown } from "./measurements/breakdown.js";
import { measureCallLatency } from "./measurements/callLatency.js";
import { type ClusterScenario, measureClusterSpread } from "./measurements/clusterSpread.js";
import { measureEventRelay } from "./measurements/eventRelay.js";
import { measureFanout } from "./measurements/fanout.js";
import { type FollowUpBurst, measureFollowUpBurst } from "./measurements/followUpBurst.js";
import { measureSessions, type Sessions } from "./measurements/sessions.js";
import {
  combineRounds,
  measureRawRound,
  measureYiemRound,
  openLoadSessions,
  type SustainedOptions,
  type SustainedRound,
} from "./measurements/throughput.js";
import { PLAN } from "./plan.js";
import { openRawClient, type RawClient, WORKER_CONCURRENCY } from "./rawBullmq.js";
import {
  printCluster,
  printFollowUpBurst,
  printReport,
  printSessions,
  writeResults,
} from "./report.js";
import { type Measured, toResults } from "./results.js";
import { processCpuMs, type WorkerKind, type WorkerPool, workerPool } from "./workerPool.js";

function progress(text: string): void {
  console.log(`[bench] ${text}`);
}

/** Open resources of one run, closed in reverse order whatever happened. */
interface Rig {
  redis: TestRedis;
  pool: WorkerPool;
  harness?: Harness;
  rawConnection?: RedisClient;
  raw?: RawClient;
}

async function closeRig(rig: Rig): Promise<void> {
  await rig.raw?.close().catch(() => undefined);
  await rig.rawConnection?.quit().catch(() => undefined);
  await rig.harness?.close().catch(() => undefined);
  await rig.pool.stop();
  await rig.redis.stop();
}

function workerCpu(pool: WorkerPool, kind: WorkerKind): () => Promise<number> {
  return async () => {
    const values = await Promise.all(pool.pids(kind).map(processCpuMs));
    return values.reduce<number>((sum, value) => sum + (value ?? Number.NaN), 0);
  };
}

async function measureThroughput(
  rig: Required<Rig>,
  options: SustainedOptions,
): Promise<Measured["throughput"]> {
  const sessions = await openLoadSessions(rig.harness, options.concurrency);
  const yiem: SustainedRound[] = [];
  const raw: SustainedRound[] = [];
  for (let round = 0; round < PLAN.loadRounds; round++) {
    progress(`throughput round ${round + 1}/${PLAN.loadRounds}: Yiem`);
    yiem.push(await measureYiemRound(rig.harness, sessions, options, workerCpu(rig.pool, "yiem")));
    progress(`throughput round ${round + 1}/${PLAN.loadRounds}: raw BullMQ`);
    raw.push(
      await measureRawRound(rig.raw, rig.rawConnection, options, workerCpu(rig.pool, "raw")),
    );
  }
  await Promise.all(sessions.map((session) => session.transcript.settle()));
  return { yiem: combineRounds(yiem), raw: combineRounds(raw) };
}

/** What the shared rig measured: everything but the scenarios on clusters of their own. */
type RigMeasured = Omit<Measured, "followUpBurst" | "sessions" | "cluster" | "durationS">;

async function measureOnRig(rig: Required<Rig>): Promise<RigMeasured> {
  const environment = await readEnvironment(rig.harness.command);
  progress(
    "single-call latency: remote (now, before), raw BullMQ, in-process (one worker process each)",
  );
  const calls = await measureCallLatency(rig.harness, rig.raw, PLAN.calls);
  progress("fan-out of eight: now, before this change, raw BullMQ");
  const fanout = await measureFanout(rig.harness, rig.raw, PLAN.fanout);
  progress("event relay");
  const relay = await measureEventRelay(rig.harness, PLAN.relay);
  progress("phase breakdown");
  const breakdown = await measureBreakdown(rig.harness, rig.raw, PLAN.breakdown);
  progress("starting a second worker process of each kind");
  await Promise.all([rig.pool.add("yiem"), rig.pool.add("raw")]);
  const throughput = await measureThroughput(rig, PLAN.load);
  return {
    environment,
    plan: PLAN,
    method: {
      coordinatorSide: "this process (the bench): queues, ResultWaiter, events, transcript",
      workers:
        "child processes (node + tsx, as the apps run): startToolWorker / plain BullMQ Worker",
      workerConcurrency: WORKER_CONCURRENCY,
      latencyWorkers: 1,
      throughputWorkers: 2,
      throughputConcurrency: PLAN.load.concurrency,
      throughputWindowS: (PLAN.load.measureMs * PLAN.loadRounds) / 1000,
      events:
        "createEventPublisher(command, keys, origin).emit: publishEvent sent in order on the command connection, reply not awaited",
      persistence:
        "SessionStore.appendMany under a held lease: one fenced Lua script per batch of result messages, sent without waiting for its reply (PipelinedTranscript.appendBehind; the session's next write, guarded, waits for it)",
      before:
        "the path before this change: each publishEvent awaited, SessionStore.append one message after another",
      rawWait: "job.waitUntilFinished(queueEvents, 10000)",
      followUpBurst:
        "startTestCluster: one coordinator and one tool worker process (node + tsx), a private redis-server, a scripted model answering at once; requests added with plain BullMQ, answers seen through QueueEvents 'completed'",
      sessions:
        "compiled processes as deployed (node apps/…/dist/main.js): one coordinator per configuration, two tool workers, a private redis-server, a scripted model answering after 200 ms; CPU from /proc/<pid>/stat around the load, RSS sampled from /proc/<pid>/status, /healthz probed from a process of its own",
      cluster:
        "two startTestCluster({ redisCluster: true }), YIEM_REPLICA_ACKS 0 and 1: a 3+3 Redis Cluster each, one coordinator and two tool worker processes (node + tsx), a scripted model answering at once; runs sent with YiemClient.send + waitForResponse in blocks alternating between the two; data commands per master from INFO commandstats after CONFIG RESETSTAT",
    },
    calls,
    fanout,
    relay,
    breakdown,
    throughput,
  };
}

async function openRig(): Promise<Required<Rig>> {
  const redis = await startTestRedis({ privateServer: true });
  const rig: Rig = { redis, pool: workerPool(redis.url, redis.prefix) };
  try {
    progress(`private redis-server at ${redis.url}; starting worker processes`);
    await Promise.all([rig.pool.add("yiem"), rig.pool.add("raw")]);
    rig.harness = await openHarness(redis.url, redis.prefix);
    rig.rawConnection = connectRedis(redis.url, DURABLE_CONNECTION);
    rig.raw = await openRawClient(rig.rawConnection, rig.harness.keys.bullPrefix);
    return rig as Required<Rig>;
  } catch (err) {
    await closeRig(rig);
    throw err;
  }
}

/** Reports, after a grace period, anything that would keep the process alive. */
function watchForHangingHandles(): void {
  setTimeout(() => {
    console.error(`[bench] still open after close: ${process.getActiveResourcesInfo().join(", ")}`);
    process.exit(1);
  }, 10_000).unref();
}

/** Measures the follow-up burst on a cluster of its own. */
function measureBurst(): Promise<FollowUpBurst> {
  progress(
    `follow-up burst: a cluster of its own; ${PLAN.followUpBurst.small} then ${PLAN.followUpBurst.large} follow-ups to one session, other sessions probed meanwhile`,
  );
  return measureFollowUpBurst(PLAN.followUpBurst);
}

/** Measures many concurrent sessions on one compiled coordinator (a cluster of its own). */
function measureSessionsScenario(): Promise<Sessions> {
  const p = PLAN.sessions;
  progress(
    `sessions: a cluster of compiled processes; ${p.sessions} sessions at concurrency ${p.concurrency} and at the default, then the raw anchors`,
  );
  return measureSessions(p, progress);
}

/** Measures runs on a Redis Cluster with and without replica acknowledgements (or skips). */
async function measureClusterScenario(): Promise<ClusterScenario> {
  const p = PLAN.cluster;
  progress(
    `cluster: ${p.rounds * p.runsPerRound} runs to fresh sessions on each of two 3+3 Redis Clusters (YIEM_REPLICA_ACKS 0 and 1), ${p.inFlight} in flight`,
  );
  const cluster = await measureClusterSpread(p, progress);
  if (!cluster.measured) progress(`cluster: skipped, ${cluster.reason}`);
  return cluster;
}

/**
 * Runs every measurement: the shared rig first (closed before the burst), then the burst, then
 * the sessions, then the Redis Cluster runs.
 */
async function measureAll(startedAt: number): Promise<Measured> {
  const rig = await openRig();
  let onRig: RigMeasured;
  try {
    onRig = await measureOnRig(rig);
  } finally {
    await closeRig(rig);
  }
  const followUpBurst = await measureBurst();
  const sessions = await measureSessionsScenario();
  const cluster = await measureClusterScenario();
  return {
    ...onRig,
    environment: { ...onRig.environment, loadAverageAtEnd: loadAverage() },
    followUpBurst,
    sessions,
    cluster,
    durationS: Math.round((performance.now() - startedAt) / 100) / 10,
  };
}

/** The scenarios that run on their own with `--only <name>`. */
const ALONE = ["followUpBurst", "sessions", "cluster"] as const;
type AloneScenario = (typeof ALONE)[number];

/** The scenario named by `--only <name>`, if any. */
function readOnlyScenario(argv: readonly string[]): AloneScenario | undefined {
  const at = argv.indexOf("--only");
  if (at < 0) return undefined;
  const name = ALONE.find((known) => known === argv[at + 1]);
  if (!name)
    throw new Error(
      `--only: unknown scenario ${argv[at + 1] ?? "(none)"}; known: ${ALONE.join(", ")}`,
    );
  return name;
}

/** Runs one scenario and prints its figures; writes no file. */
async function runOnly(name: AloneScenario): Promise<void> {
  const startedAt = performance.now();
  if (name === "followUpBurst") printFollowUpBurst(await measureBurst());
  else if (name === "sessions") printSessions(await measureSessionsScenario());
  else printCluster(await measureClusterScenario());
  progress(`done in ${Math.round((performance.now() - startedAt) / 100) / 10} s (no file written)`);
}

async function main(): Promise<void> {
  const only = readOnlyScenario(process.argv.slice(2));
  if (only) {
    await runOnly(only);
    watchForHangingHandles();
    return;
  }
  const measured = await measureAll(performance.now());
  const results = toResults(measured);
  printReport(results);
  for (const path of await writeResults(results)) progress(`wrote ${path}`);
  progress(`done in ${measured.durationS} s`);
  watchForHangingHandles();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
  watchForHangingHandles();
});
