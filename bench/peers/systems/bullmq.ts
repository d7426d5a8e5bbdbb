/**
 * BullMQ by hand: a private `redis-server` with AOF fsynced on every write, the hand-written
 * orchestrator (`processes/bullmqOrchestrator.ts`) and two tool workers
 * (`processes/bullmqTools.ts`). Runs arrive as jobs of the `runs` queue.
 */
import { startTestRedis } from "@yiem/testing";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { readRedisPid } from "../../sampling/processSampler.js";
import { startJobWaiter } from "./jobWaiter.js";
import type { PeerContext, PeerSystem } from "./peerSystem.js";
import { firstOf, startPeerProcess } from "./processes.js";

/** Starts BullMQ by hand. */
export async function startBullmq(ctx: PeerContext): Promise<PeerSystem> {
  const redis = await startTestRedis({
    privateServer: true,
    appendOnly: true,
    appendFsync: "always",
  });
  const env = {
    BENCH_REDIS_URL: redis.url,
    BENCH_MODEL_URL: ctx.modelURL,
    BENCH_PEERS_EFFECTS: ctx.effectsFile,
  };
  const workers = await Promise.all([
    startPeerProcess("bullmqTools", env),
    startPeerProcess("bullmqTools", env),
  ]);
  const orchestrator = await startPeerProcess("bullmqOrchestrator", env);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue("runs", { connection });
  const eventsConnection = connection.duplicate();
  const events = new QueueEvents("runs", { connection: eventsConnection });
  events.setMaxListeners(0);
  await events.waitUntilReady();
  const waiter = startJobWaiter(events);
  const redisPid = await readRedisPid(connection);
  return {
    name: "BullMQ by hand",
    redisUrl: redis.url,
    pidNames: ["redis", "orchestrator", "worker 1", "worker 2"],
    async run(run) {
      const done = waiter.waitFor(run);
      await queue.add("run", { run }, { jobId: run, removeOnComplete: 1000 });
      return String(await done);
    },
    pids: async () => [
      redisPid,
      orchestrator.current().pid,
      ...workers.map((w) => w.current().pid),
    ],
    killOrchestrator: () => orchestrator.kill(),
    killToolWorker: () => firstOf(workers).kill(),
    async close() {
      waiter.stop();
      await Promise.all([orchestrator, ...workers].map((p) => p.stop()));
      await events.close();
      await queue.close();
      eventsConnection.disconnect();
      connection.disconnect();
      await redis.stop();
    },
  };
}
