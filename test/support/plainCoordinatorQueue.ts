import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";

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
 * reader for `job.waitUntilFinished`. `close` closes both and their connections.
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
  await events.waitUntilReady();
  return {
    connection,
    queue,
    events,
    async close() {
      await events.close();
      await queue.close();
      eventsConnection.disconnect(); // BullMQ never closes a connection it was given
      connection.disconnect();
    },
  };
}

/**
 * Opens the coordinator queue of `cluster` with plain bullmq for the tests of the calling file
 * (in `beforeAll`, after the cluster started) and closes it in `afterAll`. The returned object
 * stands for the open queue; reading it outside a test throws.
 *
 * @example const plain = usePlainCoordinatorQueue(cluster); // then plain.queue.add("ask", data)
 */
export function usePlainCoordinatorQueue(cluster: {
  redis: { url: string; prefix: string };
}): PlainCoordinatorQueue {
  let current: PlainCoordinatorQueue | undefined;
  beforeAll(async () => {
    current = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
  });
  afterAll(async () => {
    await current?.close();
  });
  return new Proxy({} as PlainCoordinatorQueue, {
    get(_target, property) {
      if (!current)
        throw new Error("the plain coordinator queue is not open (used outside a test?)");
      return current[property as keyof PlainCoordinatorQueue];
    },
  });
}
