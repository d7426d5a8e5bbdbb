/**
 * The hand-written BullMQ orchestrator: a `Worker` on the `runs` queue whose job runs the
 * agent loop (model, both tool calls as jobs of the `tools` queue awaited with
 * `waitUntilFinished`, model). Nothing of the run is kept between steps: a run picked up again
 * after a crash starts over. BullMQ's defaults (30 s lock, 30 s stalled check); a tool job has
 * `attempts: 2` (one retry; a job of a dead worker is moved back by the stalled check).
 */
import { Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import { callModel, openModel, runAgent } from "../workload.js";

const url = process.env.BENCH_REDIS_URL ?? "";
const model = openModel(process.env.BENCH_MODEL_URL ?? "");
const connection = new Redis(url, { maxRetriesPerRequest: null });
const tools = new Queue("tools", { connection });
tools.setMaxListeners(0);
const toolEvents = new QueueEvents("tools", { connection: connection.duplicate() });
toolEvents.setMaxListeners(0);
await toolEvents.waitUntilReady();

const worker = new Worker<{ run: string }, string>(
  "runs",
  (job) =>
    runAgent(job.data.run, {
      model: (messages) => callModel(model, messages),
      tools: (calls) =>
        Promise.all(
          calls.map(async (call) => {
            const step = await tools.add("step", call, { removeOnComplete: 1000, attempts: 2 });
            return (await step.waitUntilFinished(toolEvents)) as string;
          }),
        ),
    }),
  { connection: connection.duplicate(), concurrency: 512 },
);
await worker.waitUntilReady();
console.log("ready");
process.on("SIGTERM", async () => {
  await worker.close();
  await toolEvents.close();
  await tools.close();
  connection.disconnect();
  process.exit(0);
});
