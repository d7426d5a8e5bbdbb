/**
 * A real Redis for tests of BullMQ queues and workers: a durable connection, BullMQ's key
 * prefix under the test's own, fresh queues with their `QueueEvents` reader, and everything a
 * test opened closed after it (workers before their queues). Call `useBullQueues()` at the top
 * of a test file.
 */
import { connectRedis, type RedisClient } from "@yiem/core";
import { DURABLE_CONNECTION } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Queue, QueueEvents } from "bullmq";
import { afterAll, afterEach, beforeAll } from "vitest";

/** What `useBullQueues` gives a test file (its fields are set once `beforeAll` ran). */
export interface BullQueuesFixture {
  redis: TestRedis;
  connection: RedisClient;
  /** BullMQ's key prefix (`<test prefix>:bull`). */
  bullPrefix: string;
  /** Closed after each test, in order: `unshift` a worker so it closes before its queue. */
  opened: Array<{ close(): Promise<void> }>;
  /** A fresh queue named `<stem>-<n>` with its events reader, both closed after the test. */
  openQueue(stem: string): Promise<{ queue: Queue; events: QueueEvents }>;
}

/** Starts a test Redis for the file and closes what each test opened; see `BullQueuesFixture`. */
export function useBullQueues(): BullQueuesFixture {
  let queueCount = 0;
  const fixture = {
    opened: [],
    async openQueue(stem: string) {
      const name = `${stem}-${++queueCount}`;
      const options = { connection: fixture.connection, prefix: fixture.bullPrefix };
      const queue = new Queue(name, options);
      const events = new QueueEvents(name, options);
      fixture.opened.push(events, queue);
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
      return { queue, events };
    },
  } as unknown as BullQueuesFixture;
  beforeAll(async () => {
    fixture.redis = await startTestRedis();
    fixture.connection = connectRedis(fixture.redis.url, DURABLE_CONNECTION);
    fixture.bullPrefix = `${fixture.redis.prefix}:bull`;
  });
  afterEach(async () => {
    await Promise.all(fixture.opened.splice(0).map((item) => item.close()));
  });
  afterAll(async () => {
    fixture.connection?.disconnect();
    await fixture.redis?.stop();
  });
  return fixture;
}
