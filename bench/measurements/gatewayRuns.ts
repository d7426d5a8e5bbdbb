/**
 * Runs per second through the gateway against plain BullMQ, on the same coordinator and model
 * in the same run: `inFlight` loops, each starting a run to a fresh session and waiting for its
 * answer, in alternating blocks of `blockMs`. Through the gateway a run is
 * `POST /v1/runs?wait=true`; plain, it is `queue.add` on the coordinator queue with the job data
 * the gateway's client adds (`input`, `sessionId`, `followUp: false`) and
 * `job.waitUntilFinished`.
 */
import { randomUUID } from "node:crypto";
import { type Summary, summarize } from "../sampling/stats.js";
import type { GatewayCluster } from "../setup/gatewayCluster.js";

/** Sizes of the runs phase. */
export interface GatewayRunsPlan {
  /** Runs in flight on each path. */
  inFlight: number;
  /** Each path's unmeasured warm-up block (ms). */
  warmupMs: number;
  /** One measured block (ms). */
  blockMs: number;
  /** Blocks per path, alternating. */
  rounds: number;
  /** How long one run may take (ms). */
  maxRunMs: number;
}

/** What one path measured over its blocks. */
export interface RunsPath {
  runs: number;
  /** Runs that failed or answered another status. */
  failed: number;
  runsPerS: number;
  /** Start → answer of each run (ms). */
  latency: Summary;
}

/** What the runs phase measured. */
export interface GatewayRuns {
  gateway: RunsPath;
  bullmq: RunsPath;
  /** Gateway runs/s ÷ plain BullMQ runs/s. */
  ratio: number;
}

type RunOnce = () => Promise<boolean>;

const INPUT = "run both steps";

function gatewayRun(cluster: GatewayCluster, maxRunMs: number): RunOnce {
  return async () => {
    const response = await fetch(`${cluster.gateway.url}/v1/runs?wait=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: INPUT }),
      signal: AbortSignal.timeout(maxRunMs),
    });
    await response.arrayBuffer();
    return response.status === 200;
  };
}

function bullmqRun(cluster: GatewayCluster, maxRunMs: number): RunOnce {
  const { queue, events } = cluster.base;
  return async () => {
    const data = { input: INPUT, sessionId: randomUUID(), followUp: false };
    const job = await queue.add("request", data, {
      jobId: randomUUID(),
      removeOnComplete: { age: 3600, count: 10_000 },
    });
    await job.waitUntilFinished(events, maxRunMs);
    return true;
  };
}

interface Block {
  latencies: number[];
  failed: number;
  ms: number;
}

/** `inFlight` loops calling `run` until `blockMs` has passed. */
async function runBlock(run: RunOnce, inFlight: number, blockMs: number): Promise<Block> {
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() - started < blockMs) {
      const at = performance.now();
      const ok = await run().catch(() => false);
      if (ok) latencies.push(performance.now() - at);
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return { latencies, failed, ms: performance.now() - started };
}

function toPath(blocks: Block[]): RunsPath {
  const latencies = blocks.flatMap((b) => b.latencies);
  const ms = blocks.reduce((sum, b) => sum + b.ms, 0);
  return {
    runs: latencies.length,
    failed: blocks.reduce((sum, b) => sum + b.failed, 0),
    runsPerS: latencies.length / (ms / 1000),
    latency: summarize(latencies),
  };
}

/** Runs the warm-ups, then the alternating measured blocks. */
export async function measureGatewayRuns(
  cluster: GatewayCluster,
  plan: GatewayRunsPlan,
  progress: (text: string) => void,
): Promise<GatewayRuns> {
  const paths = {
    gateway: gatewayRun(cluster, plan.maxRunMs),
    bullmq: bullmqRun(cluster, plan.maxRunMs),
  };
  progress(`gateway: runs/s, ${plan.inFlight} in flight, gateway ?wait=true against plain BullMQ`);
  await runBlock(paths.gateway, plan.inFlight, plan.warmupMs);
  await runBlock(paths.bullmq, plan.inFlight, plan.warmupMs);
  const blocks: Record<keyof typeof paths, Block[]> = { gateway: [], bullmq: [] };
  for (let round = 0; round < plan.rounds; round++) {
    const order =
      round % 2 === 0 ? (["gateway", "bullmq"] as const) : (["bullmq", "gateway"] as const);
    for (const name of order)
      blocks[name].push(await runBlock(paths[name], plan.inFlight, plan.blockMs));
  }
  const gateway = toPath(blocks.gateway);
  const bullmq = toPath(blocks.bullmq);
  return { gateway, bullmq, ratio: gateway.runsPerS / bullmq.runsPerS };
}
