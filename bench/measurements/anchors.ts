/**
 * The raw parts a coordinator's run is made of, measured alone: the `openai` SDK's CPU per
 * streamed chat completion, and the CPU of one plain BullMQ add/complete pair (the producer's
 * `queue.add` + `waitUntilFinished` and a plain worker's take + complete).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterKeys, connectRedis } from "@yiem/core";
import { DURABLE_CONNECTION } from "@yiem/core/internal";
import type { ScriptedRequest } from "@yiem/testing";
import { sourceCommand, spawnCommand } from "../../test/support/processes.js";
import { processCpuMs } from "../sampling/processSampler.js";
import { openRawClient, type RawClient, rawJobData } from "../setup/rawBullmq.js";
import type { SessionsCluster } from "../setup/sessionsCluster.js";
import { workerPool } from "../setup/workerPool.js";

/** Sizes of the anchor loops. */
export interface AnchorPlan {
  /** Streamed completions before the measured ones (not counted). */
  warmup: number;
  /** Measured streamed completions (or add/complete pairs). */
  count: number;
  /** How many are in flight at once. */
  inFlight: number;
}

/**
 * What the SDK anchor sends with: `default` is the SDK as a user runs it (Node's `fetch`), the
 * raw part the coordinator is held against; `yiem` is Yiem's `createLlmFetch`, as the
 * coordinator's own client sends.
 */
export type SdkFetch = "default" | "yiem";

/** CPU of the `openai` SDK alone per streamed chat completion. */
export interface SdkAnchor {
  calls: number;
  inFlight: number;
  /** SSE chunks read per call (both kinds of answer taken in turn). */
  chunksPerCall: number;
  /** CPU of the SDK's process per call (ms); for a run's anchor, the mean of its `rounds`. */
  cpuMsPerCall: number;
  wallMs: number;
  /** Each round's CPU per call (ms), when the anchor is the mean of several (`meanSdkAnchor`). */
  rounds?: number[];
}

/** CPU of one plain BullMQ add/complete pair. */
export interface BullmqAnchor {
  jobs: number;
  inFlight: number;
  workerProcesses: number;
  /** The producer's CPU per job (`queue.add` + `waitUntilFinished`, this process) (ms). */
  producerCpuMsPerJob: number;
  /** The plain workers' CPU per job (take, run a constant processor, complete) (ms). */
  workerCpuMsPerJob: number;
  /** Both sides (ms). */
  pairCpuMsPerJob: number;
  wallMs: number;
}

/** The last request body of each kind the model received: first turns, then tool results. */
export function pickAnchorBodies(requests: readonly ScriptedRequest[]): unknown[] {
  const lastRole = (r: ScriptedRequest) =>
    ((r.body.messages ?? []) as Array<{ role?: string }>).at(-1)?.role;
  const first = requests.findLast((r) => lastRole(r) === "user");
  const second = requests.findLast((r) => lastRole(r) === "tool");
  if (!first || !second) throw new Error("the model saw no complete run to take bodies from");
  return [first.body, second.body];
}

/**
 * Runs `bench/workers/sdkAnchor.ts` in a child process against the cluster's scripted model,
 * sending `bodies` in turn (the coordinator's own requests, so replies alternate between the
 * two tool calls and the final text), and reads the CPU it reports.
 */
export async function measureSdkAnchor(
  cluster: SessionsCluster,
  bodies: unknown[],
  plan: AnchorPlan,
  fetch: SdkFetch = "default",
): Promise<SdkAnchor> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-bench-sdk-"));
  const file = join(dir, "bodies.json");
  await writeFile(file, JSON.stringify(bodies));
  const child = spawnCommand(sourceCommand("bench/workers/sdkAnchor.ts"), {
    BENCH_SDK_BASE_URL: cluster.model.baseURL,
    BENCH_SDK_BODIES: file,
    BENCH_SDK_WARMUP: String(plan.warmup),
    BENCH_SDK_CALLS: String(plan.count),
    BENCH_SDK_IN_FLIGHT: String(plan.inFlight),
    BENCH_SDK_FETCH: fetch,
  });
  try {
    const line = await child.waitForLine((l) => l.includes('"anchor"'), 120_000);
    const { anchor } = JSON.parse(line) as {
      anchor: { calls: number; chunks: number; cpuMs: number; wallMs: number };
    };
    return {
      calls: anchor.calls,
      inFlight: plan.inFlight,
      chunksPerCall: anchor.chunks / anchor.calls,
      cpuMsPerCall: anchor.cpuMs / anchor.calls,
      wallMs: anchor.wallMs,
    };
  } finally {
    await child.stop(2000);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Makes `count` raw calls, `inFlight` at a time. */
async function runRawJobs(raw: RawClient, count: number, inFlight: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const n = next++;
      await raw.call("anchor", rawJobData("anchor-session", "anchor-run", n));
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
}

async function processCpuMsOrNaN(pid: number): Promise<number> {
  return (await processCpuMs(pid)) ?? Number.NaN;
}

function readOwnCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * Plain BullMQ on the cluster's Redis: `workerProcesses` plain worker processes (constant
 * processor, as `bench/setup/rawBullmq.ts` defines them) and a producer in this process adding
 * jobs of Yiem's tool-job size and awaiting each with `waitUntilFinished`. CPU is this process's
 * (`process.cpuUsage()`) plus the workers' (`/proc`), around the measured jobs.
 */
export async function measureBullmqAnchor(
  cluster: SessionsCluster,
  plan: AnchorPlan,
  workerProcesses: number,
): Promise<BullmqAnchor> {
  const pool = workerPool(cluster.redis.url, cluster.redis.prefix);
  const connection = connectRedis(cluster.redis.url, DURABLE_CONNECTION);
  let raw: RawClient | undefined;
  try {
    for (let i = 0; i < workerProcesses; i++) await pool.add("raw");
    raw = await openRawClient(connection, clusterKeys(cluster.redis.prefix).bullPrefix);
    await runRawJobs(raw, plan.warmup, plan.inFlight);
    const workerCpu = async () => {
      const values = await Promise.all(pool.pids("raw").map(processCpuMsOrNaN));
      return values.reduce((sum, v) => sum + v, 0);
    };
    const [ownBefore, workersBefore] = [readOwnCpuMs(), await workerCpu()];
    const started = performance.now();
    await runRawJobs(raw, plan.count, plan.inFlight);
    const wallMs = performance.now() - started;
    const [ownAfter, workersAfter] = [readOwnCpuMs(), await workerCpu()];
    const producer = (ownAfter - ownBefore) / plan.count;
    const worker = (workersAfter - workersBefore) / plan.count;
    return {
      jobs: plan.count,
      inFlight: plan.inFlight,
      workerProcesses,
      producerCpuMsPerJob: producer,
      workerCpuMsPerJob: worker,
      pairCpuMsPerJob: producer + worker,
      wallMs,
    };
  } finally {
    await raw?.close().catch(() => undefined);
    await connection.quit().catch(() => undefined);
    await pool.stop();
  }
}
