import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";

/** The coordinator queue as any BullMQ user opens it: no Yiem code, only its name and prefix. */
export interface PlainCoordinatorQueue {
  /** A plain Redis connection (for `INFO`, say). */
  connection: Redis;
  queue: Queue;
  events: QueueEvents;
  close(): Promise<void>;
}

/**
 * Opens the `coordinator` queue under `<prefix>:bull` with plain bullmq, and a `QueueEvents`
 * reader for `job.waitUntilFinished`. `close` closes both and their connections, and never
 * throws. Free of vitest, so benches open it too.
 *
 * @example const plain = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
 */
export async function openPlainCoordinatorQueue(
  redisUrl: string,
  prefix: string,
): Promise<PlainCoordinatorQueue> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const eventsConnection = connection.duplicate();
  const bullPrefix = `${prefix}:bull`;
  const queue = new Queue("coordinator", { connection, prefix: bullPrefix });
  const events = new QueueEvents("coordinator", {
    connection: eventsConnection,
    prefix: bullPrefix,
  });
  events.setMaxListeners(0); // a waiter per job, as many as a bench sends at once
  await events.waitUntilReady();
  return {
    connection,
    queue,
    events,
    async close() {
      await events.close().catch(() => undefined);
      await queue.close().catch(() => undefined);
      eventsConnection.disconnect(); // BullMQ never closes a connection it was given
      connection.disconnect();
    },
  };
}
