/**
 * `npm run bench`: measures Yiem's remote tool calls against plain BullMQ on one private Redis
 * (the shared rig, `setup/rig.ts`), then a burst of follow-ups on a cluster of its own, then
 * 2,000 concurrent sessions on one compiled coordinator (a cluster of its own too), then runs
 * on a 3+3 Redis Cluster with and without replica acknowledgements (a cluster of its own per
 * phase), prints a table, and writes `bench/results.json`, `bench/history.json` and
 * `docs/PERFORMANCE.md`. The coordinator side of the call measurements runs in this process;
 * tool workers (Yiem and plain BullMQ alike) are child processes. It prints figures; it never
 * asserts timings.
 *
 * `npm run bench -- --only <scenario>` runs one scenario alone and only prints its figures (no
 * file is written: the files always come from one full run): `calls`, `fanout`, `relay`,
 * `breakdown` or `throughput` on the shared rig, `followUpBurst`, `sessions` or `cluster` on a
 * cluster of its own, `mcp` (an MCP call's overhead; only alone, not in the full run) in this process,
 * `gateway` (SSE watchers and runs/s on one compiled gateway; only alone, and it writes its
 * figures into `bench/results.json`, which a full run keeps). `npm run bench -- --render-only` measures nothing: it renders
 * `docs/PERFORMANCE.md` again from the committed `bench/results.json` and `bench/history.json`.
 */

import { measureBreakdown } from "./measurements/breakdown.js";
import { measureCallLatency } from "./measurements/callLatency.js";
import { type ClusterScenario, measureClusterSpread } from "./measurements/clusterSpread.js";
import { measureEventRelay } from "./measurements/eventRelay.js";
import { measureFanout } from "./measurements/fanout.js";
import { type FollowUpBurst, measureFollowUpBurst } from "./measurements/followUpBurst.js";
import { measureGateway } from "./measurements/gateway.js";
import { measureMcpOverhead } from "./measurements/mcpOverhead.js";
import { measureSessions, type Sessions } from "./measurements/sessions.js";
import { measureThroughput, type ThroughputPair } from "./measurements/throughput.js";
import { PLAN } from "./plan.js";
import { printGateway, readCommittedGateway, writeGatewayResults } from "./report/gatewayReport.js";
import { describeMethod } from "./report/method.js";
import {
  printBreakdown,
  printCallLatency,
  printCluster,
  printEventRelay,
  printFanout,
  printFollowUpBurst,
  printMcpOverhead,
  printReport,
  printSessions,
  printThroughput,
} from "./report/printReport.js";
import { renderFromFiles, writeResults } from "./report/resultFiles.js";
import { type Measured, toResults } from "./report/results.js";
import { loadAverage, readEnvironment } from "./sampling/environment.js";
import { closeRig, openRig, type Rig } from "./setup/rig.js";

function progress(text: string): void {
  console.log(`[bench] ${text}`);
}

/** Seconds since `startedAt` (`performance.now()`), to a tenth. */
function secondsSince(startedAt: number): number {
  return Math.round((performance.now() - startedAt) / 100) / 10;
}

function measureCalls(rig: Rig) {
  progress("single-call latency: remote, raw BullMQ, in-process (one worker process each)");
  return measureCallLatency(rig.harness, rig.raw, PLAN.calls);
}

function measureBatches(rig: Rig) {
  progress("fan-out of eight: remote, raw BullMQ");
  return measureFanout(rig.harness, rig.raw, PLAN.fanout);
}

function measureRelay(rig: Rig) {
  progress("event relay");
  return measureEventRelay(rig.harness, PLAN.relay);
}

function measurePhases(rig: Rig) {
  progress("phase breakdown");
  return measureBreakdown(rig.harness, rig.raw, PLAN.breakdown);
}

/** Starts a second worker process of each kind, then measures sustained load. */
async function measureLoad(rig: Rig): Promise<ThroughputPair> {
  progress("starting a second worker process of each kind");
  await Promise.all([rig.pool.add("yiem"), rig.pool.add("raw")]);
  return measureThroughput(rig, PLAN.load, PLAN.loadRounds, progress);
}

/** What the shared rig measured: everything but the scenarios on clusters of their own. */
type RigMeasured = Omit<Measured, "followUpBurst" | "sessions" | "cluster" | "durationS">;

async function measureOnRig(rig: Rig): Promise<RigMeasured> {
  const environment = await readEnvironment(rig.harness.command);
  const calls = await measureCalls(rig);
  const fanout = await measureBatches(rig);
  const relay = await measureRelay(rig);
  const breakdown = await measurePhases(rig);
  const throughput = await measureLoad(rig);
  return {
    environment,
    plan: PLAN,
    method: describeMethod(PLAN),
    calls,
    fanout,
    relay,
    breakdown,
    throughput,
  };
}

/** Opens the shared rig, runs `measure` on it and closes it whatever happened. */
async function withRig<T>(measure: (rig: Rig) => Promise<T>): Promise<T> {
  const rig = await openRig(progress);
  try {
    return await measure(rig);
  } finally {
    await closeRig(rig);
  }
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

/** Measures an MCP call directly through the SDK and as a Yiem tool, in process and remote. */
function measureMcp() {
  progress(
    "MCP overhead: server-everything's echo over stdio, through the SDK, as a Yiem tool in process, and remote (a private Redis, one worker process)",
  );
  return measureMcpOverhead(PLAN.mcp);
}

/** Measures the gateway (a cluster of its own), prints it and writes it into the results. */
async function measureGatewayScenario(): Promise<void> {
  const gateway = await measureGateway(PLAN.gateway, progress);
  printGateway(gateway);
  for (const path of await writeGatewayResults(gateway)) progress(`wrote ${path}`);
}

/**
 * Runs every measurement: the shared rig first (closed before the burst), then the burst, then
 * the sessions, then the Redis Cluster runs.
 */
async function measureAll(startedAt: number): Promise<Measured> {
  const onRig = await withRig(measureOnRig);
  const followUpBurst = await measureBurst();
  const sessions = await measureSessionsScenario();
  const cluster = await measureClusterScenario();
  return {
    ...onRig,
    environment: { ...onRig.environment, loadAverageAtEnd: loadAverage() },
    followUpBurst,
    sessions,
    cluster,
    durationS: secondsSince(startedAt),
  };
}

/** Each scenario `--only <name>` runs alone: it measures, then prints its figures. */
const ALONE = {
  calls: () => withRig(measureCalls).then(printCallLatency),
  fanout: () => withRig(measureBatches).then(printFanout),
  relay: () => withRig(measureRelay).then(printEventRelay),
  breakdown: () => withRig(measurePhases).then(printBreakdown),
  throughput: () => withRig(measureLoad).then(printThroughput),
  followUpBurst: () => measureBurst().then(printFollowUpBurst),
  sessions: () => measureSessionsScenario().then(printSessions),
  cluster: () => measureClusterScenario().then(printCluster),
  mcp: () => measureMcp().then(printMcpOverhead),
  gateway: () => measureGatewayScenario(),
} satisfies Record<string, () => Promise<void>>;
type AloneScenario = keyof typeof ALONE;

/** The scenario named by `--only <name>`, if any. */
function readOnlyScenario(argv: readonly string[]): AloneScenario | undefined {
  const at = argv.indexOf("--only");
  if (at < 0) return undefined;
  const known = Object.keys(ALONE) as AloneScenario[];
  const name = known.find((scenario) => scenario === argv[at + 1]);
  if (!name)
    throw new Error(
      `--only: unknown scenario ${argv[at + 1] ?? "(none)"}; known: ${known.join(", ")}`,
    );
  return name;
}

/** Reports, after a grace period, anything that would keep the process alive. */
function watchForHangingHandles(): void {
  setTimeout(() => {
    console.error(`[bench] still open after close: ${process.getActiveResourcesInfo().join(", ")}`);
    process.exit(1);
  }, 10_000).unref();
}

/** Measures everything, prints the report and writes the result files. */
async function runFull(): Promise<void> {
  const measured = await measureAll(performance.now());
  const gateway = await readCommittedGateway(); // measured alone, kept
  const results = { ...toResults(measured), ...(gateway ? { gateway } : {}) };
  printReport(results);
  for (const path of await writeResults(results)) progress(`wrote ${path}`);
  progress(`done in ${measured.durationS} s`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--render-only")) {
    progress(`wrote ${await renderFromFiles()} from the committed results (nothing measured)`);
    return;
  }
  const only = readOnlyScenario(argv);
  const startedAt = performance.now();
  if (only) {
    await ALONE[only]();
    const wrote = only === "gateway" ? "" : " (no file written)";
    progress(`done in ${secondsSince(startedAt)} s${wrote}`);
  } else {
    await runFull();
  }
  watchForHangingHandles();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
  watchForHangingHandles();
});
