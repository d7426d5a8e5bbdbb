/**
 * Yiem on a 3+3 Redis Cluster (issue 11): how evenly the masters share the data commands
 * while runs are answered, and what the replica acknowledgements cost. Two clusters of their
 * own (`startTestCluster({ redisCluster: true })`: one coordinator and two tool worker
 * processes, six `redis-server` processes each), one with `YIEM_REPLICA_ACKS=0` (no `WAIT`)
 * and one with 1 (the default on a cluster: each durable session write followed by
 * `WAIT 1 250`), loaded in alternating blocks. Each run is one request to a fresh session: a
 * model call asking for two parallel no-op tool calls, then a model call that answers.
 */

import { redisSupportsCluster, type ScriptedReply, type ScriptedRequest } from "@yiem/testing";
import { startTestCluster, type TestCluster } from "../../test/support/cluster.js";
import { readSpread, type Spread } from "../sampling/clusterMasters.js";
import { type Summary, summarize } from "../sampling/stats.js";

/** Sizes and bounds of the scenario. */
export interface ClusterSpreadPlan {
  /** Runs before the measured ones on each cluster (not measured, not counted). */
  warmupRuns: number;
  /** Rounds of measured blocks; each round runs one block on each cluster, in turn. */
  rounds: number;
  /** Runs per block, each to a fresh session. */
  runsPerRound: number;
  /** Runs in flight at once (each loop sends the next once its run is answered). */
  inFlight: number;
  /** Runs one at a time after each block, for the latency of a run on an unloaded cluster. */
  soloRunsPerRound: number;
  /** Tool worker processes. */
  workers: number;
  /** How long one run may take before it counts as unanswered (ms). */
  maxRunMs: number;
}

/** One phase: the measured runs on a cluster of one `YIEM_REPLICA_ACKS` value. */
export interface AcksPhase {
  /** `YIEM_REPLICA_ACKS` of the coordinator. */
  replicaAcks: number;
  /** Runs in flight at once in the loaded blocks. */
  inFlight: number;
  /** Runs sent `inFlight` at a time. */
  runs: number;
  /** Of those, runs answered with the scripted answer in time. */
  answered: number;
  /** Runs (loaded or one at a time) that failed, timed out or answered something else. */
  unanswered: number;
  /** The loaded blocks' wall times, each from its first `send` to its last answer, summed (ms). */
  wallMs: number;
  /** `answered` ÷ `wallMs`, per second. */
  runsPerS: number;
  /** `client.send` → `client.waitForResponse` resolved, loaded runs answered (ms). */
  latency: Summary;
  /** Runs sent one at a time. */
  soloRuns: number;
  /** The same for the runs sent one at a time (ms). */
  soloLatency: Summary;
  /** Data commands per run (loaded and one at a time), every master summed. */
  commandsPerRun: number;
  /** `WAIT` calls per run, every master summed (0 without acknowledgements). */
  waitsPerRun: number;
  spread: Spread;
}

/** What the scenario measured. */
export interface ClusterSpread {
  measured: true;
  /** `YIEM_REPLICA_ACKS=0`: no `WAIT`. */
  withoutWait: AcksPhase;
  /** `YIEM_REPLICA_ACKS=1` (the default on a cluster): session writes followed by `WAIT 1 250`. */
  withWait: AcksPhase;
  /** With ÷ without: latency p50, p99 and runs/s, and latency p50 and p99 one run at a time. */
  ratio: { p50: number; p99: number; runsPerS: number; soloP50: number; soloP99: number };
}

/** The scenario did not run (no Redis Cluster support here). */
export interface ClusterSkipped {
  measured: false;
  reason: string;
}

/** The cluster scenario's outcome: measured, or skipped with the reason. */
export type ClusterScenario = ClusterSpread | ClusterSkipped;

/** The tool the scripted model calls, twice per run (`test/support/clusterTools/sleepFor.ts`). */
export const CLUSTER_TOOL = "sleepFor";
/** The model's final answer. */
const ANSWER = "done";

/** Two parallel `sleepFor` calls of 0 ms, then (once the results are in) the answer. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role?: string }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: ANSWER };
  return {
    kind: "toolCalls",
    calls: ["a", "b"].map((label) => ({
      id: `call_${label}`,
      name: CLUSTER_TOOL,
      arguments: { ms: 0, label },
    })),
  };
}

/** Whether a response carries the scripted answer. */
function isAnswer(response: { content: Array<{ type: string; text?: string }> }): boolean {
  return response.content.some((block) => block.text === ANSWER);
}

/** One run to a fresh session; its latency (ms), or `undefined` when it was not answered. */
async function timeRun(cluster: TestCluster, maxMs: number): Promise<number | undefined> {
  const started = performance.now();
  try {
    const { runId } = await cluster.client.send("run both steps");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: maxMs });
    return isAnswer(response) ? performance.now() - started : undefined;
  } catch {
    return undefined;
  }
}

/** What a batch of runs did. */
interface RunsOutcome {
  latencies: number[];
  unanswered: number;
  wallMs: number;
}

/** Sends `count` runs, at most `inFlight` at once; each loop sends its next once answered. */
async function runMany(
  cluster: TestCluster,
  count: number,
  inFlight: number,
  maxMs: number,
): Promise<RunsOutcome> {
  const latencies: number[] = [];
  let next = 0;
  let unanswered = 0;
  const loop = async () => {
    while (next < count) {
      next++;
      const ms = await timeRun(cluster, maxMs);
      if (ms === undefined) unanswered++;
      else latencies.push(ms);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, loop));
  return { latencies, unanswered, wallMs: performance.now() - started };
}

/** The `YIEM_REPLICA_ACKS` values compared: none, then the default on a cluster. */
const REPLICA_ACKS = [0, 1] as const;

/** A running cluster of one `YIEM_REPLICA_ACKS` value and what its measured blocks did. */
interface AcksRig {
  replicaAcks: number;
  cluster: TestCluster;
  latencies: number[];
  unanswered: number;
  runs: number;
  /** The loaded blocks' wall times, summed (ms). */
  wallMs: number;
  soloLatencies: number[];
  soloRuns: number;
}

/** Starts a cluster whose coordinator runs with `YIEM_REPLICA_ACKS=replicaAcks`. */
function startAcksCluster(replicaAcks: number, workers: number): Promise<TestCluster> {
  return startTestCluster({
    redisCluster: true,
    coordinators: 1,
    workers,
    model: { respond },
    env: { YIEM_REPLICA_ACKS: String(replicaAcks), LOG_LEVEL: "info" },
  });
}

/** Starts one cluster per `REPLICA_ACKS` value, one after the other (all stopped on failure). */
async function startRigs(plan: ClusterSpreadPlan): Promise<AcksRig[]> {
  const rigs: AcksRig[] = [];
  try {
    for (const replicaAcks of REPLICA_ACKS) {
      const cluster = await startAcksCluster(replicaAcks, plan.workers);
      rigs.push({
        replicaAcks,
        cluster,
        latencies: [],
        unanswered: 0,
        runs: 0,
        wallMs: 0,
        soloLatencies: [],
        soloRuns: 0,
      });
    }
    return rigs;
  } catch (err) {
    await stopRigs(rigs);
    throw err;
  }
}

/** Stops every rig's cluster. */
async function stopRigs(rigs: readonly AcksRig[]): Promise<void> {
  await Promise.all(rigs.map((rig) => rig.cluster.stop().catch(() => undefined)));
}

/** Warms a rig's cluster up (runs not counted), then resets its nodes' stats. */
async function warmUp(rig: AcksRig, plan: ClusterSpreadPlan): Promise<void> {
  await runMany(rig.cluster, plan.warmupRuns, plan.inFlight, plan.maxRunMs);
  await rig.cluster.redisCluster?.resetStats();
}

/**
 * Runs one measured block on a rig, `inFlight` at a time, then a few runs one at a time, and
 * adds them to the rig's figures.
 */
async function runBlock(rig: AcksRig, plan: ClusterSpreadPlan): Promise<void> {
  const loaded = await runMany(rig.cluster, plan.runsPerRound, plan.inFlight, plan.maxRunMs);
  rig.latencies.push(...loaded.latencies);
  rig.unanswered += loaded.unanswered;
  rig.runs += plan.runsPerRound;
  rig.wallMs += loaded.wallMs;
  const solo = await runMany(rig.cluster, plan.soloRunsPerRound, 1, plan.maxRunMs);
  rig.soloLatencies.push(...solo.latencies);
  rig.unanswered += solo.unanswered;
  rig.soloRuns += plan.soloRunsPerRound;
}

/** Alternates measured blocks between the rigs, the order reversed every other round. */
async function runRounds(rigs: readonly AcksRig[], plan: ClusterSpreadPlan): Promise<void> {
  for (let round = 0; round < plan.rounds; round++) {
    const order = round % 2 === 0 ? rigs : [...rigs].reverse();
    for (const rig of order) await runBlock(rig, plan);
  }
}

/** A rig's figures, with its masters' data commands since the warm-up. */
async function readPhase(rig: AcksRig, inFlight: number): Promise<AcksPhase> {
  const redisCluster = rig.cluster.redisCluster;
  if (!redisCluster) throw new Error("the cluster scenario needs a Redis Cluster");
  const { spread, waitCalls } = await readSpread(redisCluster, redisCluster.prefix);
  const answered = rig.latencies.length;
  return {
    replicaAcks: rig.replicaAcks,
    inFlight,
    runs: rig.runs,
    answered,
    unanswered: rig.unanswered,
    wallMs: rig.wallMs,
    runsPerS: answered / (rig.wallMs / 1000),
    latency: summarize(rig.latencies),
    soloRuns: rig.soloRuns,
    soloLatency: summarize(rig.soloLatencies),
    commandsPerRun: spread.totalCommands / (rig.runs + rig.soloRuns),
    waitsPerRun: waitCalls / (rig.runs + rig.soloRuns),
    spread,
  };
}

/** Warms up both rigs, runs the alternating rounds and reads each rig's figures. */
async function measureRigs(
  rigs: readonly AcksRig[],
  plan: ClusterSpreadPlan,
  progress: (text: string) => void,
): Promise<AcksPhase[]> {
  for (const rig of rigs) await warmUp(rig, plan);
  progress(`cluster: ${plan.rounds} rounds of ${plan.runsPerRound} runs on each, alternating`);
  await runRounds(rigs, plan);
  const phases: AcksPhase[] = [];
  for (const rig of rigs) phases.push(await readPhase(rig, plan.inFlight));
  return phases;
}

/** With ÷ without `WAIT`: latency p50, p99 and runs/s, loaded and one run at a time. */
function ratioOf(withWait: AcksPhase, withoutWait: AcksPhase): ClusterSpread["ratio"] {
  return {
    p50: withWait.latency.p50 / withoutWait.latency.p50,
    p99: withWait.latency.p99 / withoutWait.latency.p99,
    runsPerS: withWait.runsPerS / withoutWait.runsPerS,
    soloP50: withWait.soloLatency.p50 / withoutWait.soloLatency.p50,
    soloP99: withWait.soloLatency.p99 / withoutWait.soloLatency.p99,
  };
}

/**
 * Starts two clusters of their own, one with `YIEM_REPLICA_ACKS=0` and one with 1, runs the
 * load on them in alternating blocks (so drift on the machine affects both alike), reads each
 * one's spread and stops them. Skipped when the `redis-server` here cannot run a Redis Cluster.
 */
export async function measureClusterSpread(
  plan: ClusterSpreadPlan,
  progress: (text: string) => void,
): Promise<ClusterScenario> {
  if (!redisSupportsCluster())
    return { measured: false, reason: "this redis-server cannot run a Redis Cluster (Redis 7+)" };
  progress("cluster: starting two 3+3 Redis Clusters, YIEM_REPLICA_ACKS=0 and =1");
  const rigs = await startRigs(plan);
  try {
    const [withoutWait, withWait] = await measureRigs(rigs, plan, progress);
    if (!withoutWait || !withWait) throw new Error("cluster: a phase is missing");
    return { measured: true, withoutWait, withWait, ratio: ratioOf(withWait, withoutWait) };
  } finally {
    await stopRigs(rigs);
  }
}
