/** A hand-written BullMQ tool worker: a `Worker` on the `tools` queue running `step`. */
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { runStep } from "../workload.js";

const effects = process.env.BENCH_PEERS_EFFECTS ?? "/dev/null";
const connection = new Redis(process.env.BENCH_REDIS_URL ?? "", { maxRetriesPerRequest: null });
const worker = new Worker<{ run: string; label: string }, string>(
  "tools",
  async (job) => runStep(effects, job.data),
  { connection, concurrency: 16 },
);
await worker.waitUntilReady();
console.log("ready");
process.on("SIGTERM", async () => {
  await worker.close();
  process.exit(0);
});
