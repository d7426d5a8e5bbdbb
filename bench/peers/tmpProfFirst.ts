// Starts a bundled Yiem (1 coordinator with --cpu-prof, 2 workers), sends 1 run after ready, then 1 more, stops (profile written on exit).
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startClusterProcesses, startScriptedModelServer, startTestRedis } from "@yiem/testing";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { replyTo } from "./workload.js";

const dataDir = await mkdtemp(join(tmpdir(), "pf-"));
const effectsFile = join(dataDir, "effects.log");
await writeFile(effectsFile, "");
const model = await startScriptedModelServer({ respond: replyTo });
const redis = await startTestRedis({
  privateServer: true,
  appendOnly: true,
  appendFsync: "always",
});
const processes = await startClusterProcesses({
  cwd: "/work/main",
  launch: "compiled",
  coordinators: 0,
  workers: 2,
  readyTimeoutMs: 90000,
  env: {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-x",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: "/work/main/bench/peers/yiemTools",
    BENCH_PEERS_EFFECTS: effectsFile,
  },
});
await processes.add("coordinator", {
  nodeFlags: process.env.PROF
    ? ["--cpu-prof", "--cpu-prof-dir=/tmp/proffirst", "--cpu-prof-interval", "250"]
    : [],
});
const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
const queue = new Queue("coordinator", { connection, prefix: `${redis.prefix}:bull` });
const events = new QueueEvents("coordinator", {
  connection: connection.duplicate(),
  prefix: `${redis.prefix}:bull`,
});
await events.waitUntilReady();
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const job = await queue.add("session", { input: `r${i}` }, { jobId: `r${i}` });
  await job.waitUntilFinished(events, 30000);
  console.log(`run ${i}: ${Math.round(performance.now() - t)} ms`);
}
await processes.close(5000);
await events.close();
await queue.close();
connection.disconnect();
await redis.stop();
await model.close();
process.exit(0);
