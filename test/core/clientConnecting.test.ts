/**
 * A client made just now can watch a session at once: its events stream waits for the
 * client's Redis connection rather than failing its first read. The command connection is held
 * back by a proxy while the subscriber's goes through, as a loaded machine ordered them once
 * (`npm run demo` died with "Stream isn't writeable and enableOfflineQueue options is false").
 * A burst of sends while Redis is away fails each fast, sharing one wait for the connection.
 */
import { randomUUID } from "node:crypto";
import { RedisUnavailableError, YiemClient } from "@yiem/core";
import { freePort, startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHoldingProxy } from "../support/holdingProxy.js";

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

describe("a client that is still connecting", () => {
  it("streams a session's events once its connection is up, from its first read", async () => {
    // The client's first connection is its command connection: it waits half a second.
    const proxy = await startHoldingProxy(redis.url, (n) => n === 1);
    const client = new YiemClient({ redis: proxy.url, prefix: redis.prefix });
    try {
      const controller = new AbortController();
      const stream = client.events(randomUUID(), { signal: controller.signal });
      setTimeout(() => proxy.open(), 500);
      setTimeout(() => controller.abort(), 1500);
      const seen: string[] = [];
      for await (const event of stream) seen.push(event.type);
      expect(seen).toEqual([]); // no event, and no error: it ended on the abort
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe("a client whose Redis is away", () => {
  it("fails each of a burst of sends fast, and adds one wait to its connection, not one a send", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    const client = new YiemClient({ redis: `redis://127.0.0.1:${await freePort()}` });
    try {
      const sends = Array.from({ length: 20 }, (_, i) => client.send(`hello ${i}`));
      const outcomes = await Promise.allSettled(sends);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(RedisUnavailableError);
      }
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted a tick later
      expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await client.close();
    }
  });
});
