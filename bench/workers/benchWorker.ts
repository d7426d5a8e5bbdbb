/**
 * A benchmark worker process. `BENCH_WORKER_KIND=yiem` runs `startToolWorker` with the
 * benchmark's tools; `raw` runs a plain BullMQ `Worker` whose processor returns a constant
 * result of the same size. Both serve `WORKER_CONCURRENCY` jobs at once, print
 * `{"msg":"bench worker ready"}` when listening, and close cleanly on SIGTERM. With
 * `BENCH_CPU_PROF_DIR` set, each writes a CPU profile there when it stops. With
 * `YIEM_MCP_CONFIG` set, Yiem's worker also has the tools of those MCP servers (as the
 * tool-worker app reads them).
 */
import {
  clusterKeys,
  connectRedis,
  readMcpConfig,
  startMcpToolSource,
  startToolWorker,
} from "@yiem/core";
import { DURABLE_CONNECTION } from "@yiem/core/internal";
import { Worker } from "bullmq";
import {
  RAW_QUEUE,
  RAW_TRACED_JOB,
  rawResult,
  rawTracedResult,
  WORKER_CONCURRENCY,
} from "../setup/rawBullmq.js";
import { benchToolStore } from "../setup/tools.js";
import { startCpuProfile } from "./cpuProfile.js";

interface WorkerEnv {
  kind: string;
  url: string;
  prefix: string;
  workerId: string;
}

function readEnv(): WorkerEnv {
  const { BENCH_WORKER_KIND, REDIS_URL, YIEM_PREFIX, BENCH_WORKER_ID } = process.env;
  if (!BENCH_WORKER_KIND || !REDIS_URL || !YIEM_PREFIX || !BENCH_WORKER_ID)
    throw new Error("BENCH_WORKER_KIND, REDIS_URL, YIEM_PREFIX and BENCH_WORKER_ID are required");
  return {
    kind: BENCH_WORKER_KIND,
    url: REDIS_URL,
    prefix: YIEM_PREFIX,
    workerId: BENCH_WORKER_ID,
  };
}

async function startYiem(env: WorkerEnv): Promise<() => Promise<void>> {
  const toolStore = benchToolStore(env.workerId);
  const mcpFile = process.env.YIEM_MCP_CONFIG;
  const mcp = mcpFile
    ? await startMcpToolSource({ config: readMcpConfig(mcpFile), toolStore })
    : undefined;
  const worker = await startToolWorker({
    redis: env.url,
    prefix: env.prefix,
    toolStore,
    concurrency: WORKER_CONCURRENCY,
    workerId: env.workerId,
  });
  return async () => {
    await worker.close();
    await mcp?.close();
  };
}

async function startRaw(env: WorkerEnv): Promise<() => Promise<void>> {
  const connection = connectRedis(env.url, DURABLE_CONNECTION);
  const worker = new Worker(
    RAW_QUEUE,
    async (job) =>
      job.name === RAW_TRACED_JOB ? rawTracedResult(env.workerId) : rawResult(env.workerId),
    { connection, prefix: clusterKeys(env.prefix).bullPrefix, concurrency: WORKER_CONCURRENCY },
  );
  worker.on("error", () => undefined);
  await worker.waitUntilReady();
  return async () => {
    await worker.close();
    await connection.quit();
  };
}

async function main(): Promise<void> {
  const env = readEnv();
  const writeProfile = await startCpuProfile(env.workerId);
  const stopWorker = env.kind === "raw" ? await startRaw(env) : await startYiem(env);
  const stop = async () => {
    await stopWorker();
    await writeProfile();
  };
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  console.log(
    JSON.stringify({ msg: "bench worker ready", kind: env.kind, workerId: env.workerId }),
  );
}

main().catch((err: unknown) => {
  console.error(`bench worker failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
