/**
 * `npm run bench`: measures Yiem's remote tool calls against plain BullMQ on one private Redis
 * (the shared rig, `setup/rig.ts`), then an MCP call's overhead (a Redis and worker of its
 * own), then a burst of follow-ups on a cluster of its own, then 2,000 concurrent sessions on
 * compiled coordinators (a cluster of its own too: two load shapes, one and two coordinators,
 * named and unnamed agents), then runs on a 3+3 Redis Cluster with and without replica
 * acknowledgements (a cluster of its own per phase), prints a table, and writes
 * `bench/results.json`, `bench/history.json` and `docs/PERFORMANCE.md`. The coordinator side
 * of the call measurements runs in this process; tool workers (Yiem and plain BullMQ alike)
 * are child processes. It prints figures; it never asserts timings. `--quick` runs the same
 * at `QUICK_PLAN`'s sizes and writes its files to the temporary directory.
 *
 * `npm run bench -- --only <scenario>` runs one scenario alone and only prints its figures (no
 * file is written: the files always come from one full run): `calls`, `fanout`, `relay`,
 * `breakdown` or `throughput` on the shared rig, `mcp`, `childRuns`, `followUpBurst`, `sessions` or
 * `cluster` on a cluster of its own; `sessions10k` (opt-in, never in the full run) prints and
 * records its figures in bench/sessions10k.json; `gateway` (SSE watchers and runs/s on one
 * compiled gateway; opt-in, never in the full run) and `gatewayReaders` (stalled and live
 * event-stream readers on one gateway with a keys file; opt-in too) and `newSession` (Redis
 * commands per new session against the queue's backlog; opt-in too) and `flow` (provider limits
 * shared by two coordinators under load; opt-in too) write their figures into
 * `bench/results.json`, which a full run keeps. `npm run bench -- --render-only` measures
 * nothing: it renders `docs/PERFORMANCE.md` again from the committed files.
 * `npm run bench -- --peers [options]` (its own command, never in the full run, `npm test` or
 * CI) measures Yiem against Restate, DBOS and BullMQ by hand (`bench/peers/`, installed on
 * demand), writes `bench/peers/results.json` and renders the document's peers section.
 */

import { cpus } from "node:os";
import { measureBreakdown } from "./measurements/breakdown.js";
import { measureCallLatency } from "./measurements/callLatency.js";
import { type ChildRunOverhead, measureChildRuns } from "./measurements/childRuns.js";
import { type ClusterScenario, measureClusterSpread } from "./measurements/clusterSpread.js";
import { measureEventRelay } from "./measurements/eventRelay.js";
import { measureFanout } from "./measurements/fanout.js";
import { measureFlow } from "./measurements/flow.js";
import { type FollowUpBurst, measureFollowUpBurst } from "./measurements/followUpBurst.js";
import { measureGateway } from "./measurements/gateway.js";
import { measureGatewayReaders } from "./measurements/gatewayReaders.js";
import { type McpOverhead, measureMcpOverhead } from "./measurements/mcpOverhead.js";
import { measureNewSession } from "./measurements/newSession.js";
import { measureSessions, type Sessions } from "./measurements/sessions.js";
import { measureSessions10k } from "./measurements/sessions10k.js";
import { measureThroughput, type ThroughputPair } from "./measurements/throughput.js";
import { PLAN, type Plan, QUICK_PLAN } from "./plan.js";
import {
  printFlow,
  printGateway,
  printGatewayReaders,
  printNewSession,
  readCommittedFlow,
  readCommittedGateway,
  readCommittedGatewayReaders,
  readCommittedNewSession,
  writeFlowResults,
  writeGatewayReadersResults,
  writeGatewayResults,
  writeNewSessionResults,
} from "./report/gatewayReport.js";
import { describeMethod } from "./report/method.js";
import {
  printBreakdown,
  printCallLatency,
  printChildRuns,
  printCluster,
  printEventRelay,
  printFanout,
  printFollowUpBurst,
  printMcpOverhead,
  printReport,
  printSessions,
  printSessions10k,
  printThroughput,
} from "./report/printReport.js";
import {
  quickResultFiles,
  RESULT_FILES,
  renderFromFiles,
  writeResults,
  writeSessions10k,
} from "./report/resultFiles.js";
import { type Measured, toResults } from "./report/results.js";
import { loadAverage, readEnvironment } from "./sampling/environment.js";
import { runPeers } from "./setup/peersCommand.js";
import { closeRig, openRig, type Rig } from "./setup/rig.js";

/** The plan of this run: `PLAN`, or `QUICK_PLAN` with `--quick`. */
let plan: Plan = PLAN;

function progress(text: string): void {
  console.log(`[bench] ${text}`);
}

/** Seconds since `startedAt` (`performance.now()`), to a tenth. */
function secondsSince(startedAt: number): number {
  return Math.round((performance.now() - startedAt) / 100) / 10;
}

function measureCalls(rig: Rig) {
  progress("single-call latency: remote, raw BullMQ, in-process (one worker process each)");
  return measureCallLatency(rig.harness, rig.raw, plan.calls);
}

function measureBatches(rig: Rig) {
  progress("fan-out of eight: remote, raw BullMQ");
  return measureFanout(rig.harness, rig.raw, plan.fanout);
}

function measureRelay(rig: Rig) {
  progress("event relay");
  return measureEventRelay(rig.harness, plan.relay);
}

function measurePhases(rig: Rig) {
  progress("phase breakdown");
  return measureBreakdown(rig.harness, rig.raw, plan.breakdown);
}

/** Starts a second worker process of each kind, then measures sustained load. */
async function measureLoad(rig: Rig): Promise<ThroughputPair> {
  progress("starting a second worker process of each kind");
  await Promise.all([rig.pool.add("yiem"), rig.pool.add("raw")]);
  return measureThroughput(rig, plan.load, plan.loadRounds, progress);
}

/** What the shared rig measured: everything but the scenarios on clusters of their own. */
type RigMeasured = Omit<
  Measured,
  "followUpBurst" | "sessions" | "cluster" | "mcp" | "childRuns" | "durationS" | "quick"
>;

async function measureOnRig(rig: Rig): Promise<RigMeasured> {
  const environment = await readEnvironment(rig.harness.command);
  const calls = await measureCalls(rig);
  const fanout = await measureBatches(rig);
  const relay = await measureRelay(rig);
  const breakdown = await measurePhases(rig);
  const throughput = await measureLoad(rig);
  return {
    environment,
    plan: plan,
    method: describeMethod(plan),
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
    `follow-up burst: a cluster of its own; ${plan.followUpBurst.small} then ${plan.followUpBurst.large} follow-ups to one session, other sessions probed meanwhile`,
  );
  return measureFollowUpBurst(plan.followUpBurst);
}

/** Measures many concurrent sessions on compiled coordinators (a cluster of its own). */
function measureSessionsScenario(): Promise<Sessions> {
  const p = plan.sessions;
  progress(
    `sessions: a cluster of compiled processes; ${p.sessions} sessions with addBulk at concurrency ${p.concurrency} and at the default, as separate sends with progress, on two coordinators; named against unnamed agent runs; then the raw anchors`,
  );
  return measureSessions(p, progress);
}

/** Measures runs on a Redis Cluster with and without replica acknowledgements (or skips). */
async function measureClusterScenario(): Promise<ClusterScenario> {
  const p = plan.cluster;
  progress(
    `cluster: ${p.rounds * p.runsPerRound} runs to fresh sessions on each of two 3+3 Redis Clusters (YIEM_REPLICA_ACKS 0 and 1), ${p.inFlight} in flight`,
  );
  const cluster = await measureClusterSpread(p, progress);
  if (!cluster.measured) progress(`cluster: skipped, ${cluster.reason}`);
  return cluster;
}

/**
 * Measures an MCP call directly through the SDK and as a Yiem tool, in process and remote;
 * with how long it took.
 */
async function measureMcp(): Promise<McpOverhead> {
  progress(
    "MCP overhead: server-everything's echo over stdio, through the SDK, as a Yiem tool in process, and remote (a private Redis, one worker process)",
  );
  const startedAt = performance.now();
  const figures = await measureMcpOverhead(plan.mcp);
  return { ...figures, durationS: secondsSince(startedAt) };
}

/** Measures a child run against a plain remote call (a cluster of its own). */
function measureChildRunsScenario(): Promise<ChildRunOverhead> {
  const p = plan.childRuns;
  progress(
    `child runs: a cluster of compiled processes; ${p.rounds} rounds of ${p.runsPerBlock} runs calling agent__child and ${p.runsPerBlock} calling one remote no-op tool, one at a time`,
  );
  return measureChildRuns(p, progress);
}

/**
 * Measures the gateway (a cluster of its own) and prints it; writes it into the committed
 * results unless `--quick` (whose figures are not comparable: printed only).
 */
async function measureGatewayScenario(): Promise<void> {
  const gateway = await measureGateway(plan.gateway, progress);
  printGateway(gateway);
  if (plan === QUICK_PLAN) return;
  for (const path of await writeGatewayResults(gateway)) progress(`wrote ${path}`);
}

/**
 * Measures stalled and live readers on one keyed gateway (a cluster of its own) and prints
 * it; writes it into the committed results unless `--quick`.
 */
async function measureGatewayReadersScenario(): Promise<void> {
  const figures = await measureGatewayReaders(plan.gatewayReaders, progress);
  printGatewayReaders(figures);
  if (plan === QUICK_PLAN) return;
  for (const path of await writeGatewayReadersResults(figures)) progress(`wrote ${path}`);
}

/**
 * Measures what naming a new session costs against the queue's backlog (a Redis of its own)
 * and prints it; writes it into the committed results unless `--quick`.
 */
async function measureNewSessionScenario(): Promise<void> {
  const figures = await measureNewSession(progress);
  printNewSession(figures);
  if (plan === QUICK_PLAN) return;
  for (const path of await writeNewSessionResults(figures)) progress(`wrote ${path}`);
}

/**
 * Measures flow control against a limited model (a cluster of its own) and prints it; writes
 * it into the committed results unless `--quick`.
 */
async function measureFlowScenario(): Promise<void> {
  const figures = await measureFlow(plan.flow, progress);
  printFlow(figures);
  if (plan === QUICK_PLAN) return;
  for (const path of await writeFlowResults(figures)) progress(`wrote ${path}`);
}

/**
 * Runs every measurement: the shared rig first (closed before the rest), then the MCP
 * overhead, the burst, the sessions, then the Redis Cluster runs.
 */
async function measureAll(startedAt: number): Promise<Measured> {
  const onRig = await withRig(measureOnRig);
  const mcp = await measureMcp();
  const childRuns = await measureChildRunsScenario();
  const followUpBurst = await measureBurst();
  const sessions = await measureSessionsScenario();
  const cluster = await measureClusterScenario();
  return {
    ...onRig,
    environment: { ...onRig.environment, loadAverageAtEnd: loadAverage() },
    mcp,
    childRuns,
    followUpBurst,
    sessions,
    cluster,
    durationS: secondsSince(startedAt),
    ...(plan === QUICK_PLAN ? { quick: true } : {}),
  };
}

/**
 * Measures 10,000 live sessions and 10,000 parked runs (opt-in), prints the figures and,
 * unless `--quick`, records them in `bench/sessions10k.json` (the document shows the record).
 */
async function runSessions10k(): Promise<void> {
  const p = plan.sessions10k;
  progress(
    `sessions10k: a cluster of compiled processes; ${p.sessions} sessions at once on one coordinator, then ${p.parked} runs parked for approval`,
  );
  const [startedAt, loadAverageAtStart] = [performance.now(), loadAverage()];
  const figures = await measureSessions10k(p, progress);
  printSessions10k(figures);
  if (plan === QUICK_PLAN) return;
  const path = await writeSessions10k({
    date: new Date().toISOString(),
    cores: cpus().length,
    loadAverageAtStart,
    loadAverageAtEnd: loadAverage(),
    durationS: secondsSince(startedAt),
    plan: p,
    figures,
  });
  progress(`wrote ${path}`);
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
  sessions10k: runSessions10k,
  cluster: () => measureClusterScenario().then(printCluster),
  mcp: () => measureMcp().then(printMcpOverhead),
  childRuns: () => measureChildRunsScenario().then(printChildRuns),
  gateway: () => measureGatewayScenario(),
  gatewayReaders: () => measureGatewayReadersScenario(),
  newSession: () => measureNewSessionScenario(),
  flow: () => measureFlowScenario(),
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

/**
 * Measures everything, prints the report and writes the result files: the repository's, or
 * with `--quick` copies in a folder of the system's temporary directory (the committed ones
 * stay as they are).
 */
async function runFull(): Promise<void> {
  const measured = await measureAll(performance.now());
  const gateway = await readCommittedGateway(); // measured alone, kept
  const gatewayReaders = await readCommittedGatewayReaders(); // measured alone, kept
  const newSession = await readCommittedNewSession(); // measured alone, kept
  const flow = await readCommittedFlow(); // measured alone, kept
  const results = {
    ...toResults(measured),
    ...(gateway ? { gateway } : {}),
    ...(gatewayReaders ? { gatewayReaders } : {}),
    ...(newSession ? { newSession } : {}),
    ...(flow ? { flow } : {}),
  };
  printReport(results);
  const files = plan === QUICK_PLAN ? await quickResultFiles() : RESULT_FILES;
  for (const path of await writeResults(results, files)) progress(`wrote ${path}`);
  progress(`done in ${measured.durationS} s`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--peers")) {
    await runPeers(
      argv.filter((arg) => arg !== "--peers"),
      progress,
      renderFromFiles,
    );
    return;
  }
  if (argv.includes("--render-only")) {
    progress(`wrote ${await renderFromFiles()} from the committed results (nothing measured)`);
    return;
  }
  if (argv.includes("--quick")) plan = QUICK_PLAN;
  const only = readOnlyScenario(argv);
  const startedAt = performance.now();
  if (only) {
    await ALONE[only]();
    const writes = ["gateway", "gatewayReaders", "newSession", "flow"].includes(only);
    const wrote = writes && plan !== QUICK_PLAN ? "" : " (no file written)";
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
