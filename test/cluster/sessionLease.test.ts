import { randomUUID } from "node:crypto";
import { clusterKeys, connectRedis, type RedisClient } from "@yiem/core";
import { SessionStore } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A session's lease is taken when free, renewed by its holder and refused to anyone else
 * (`SessionStore.acquire`); taking a free one, what every run's start does, costs Redis one
 * command, no script. Checked on a real Redis through what it stores and counts.
 */

let server: TestRedis;
let redis: RedisClient;
let observer: RedisClient;
let store: SessionStore;
const keys = () => clusterKeys(server.prefix);

beforeAll(async () => {
  server = await startTestRedis();
  redis = connectRedis(server.url);
  observer = connectRedis(server.url);
  store = new SessionStore(redis, keys());
});

afterAll(async () => {
  await redis.quit();
  await observer.quit();
  await server.stop();
});

/** Commands Redis has run so far, scripts' inner ones included (`INFO stats`), less this read. */
async function commandsRun(): Promise<number> {
  const info = await observer.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
}

describe("a session's lease", () => {
  it("is taken when free in one command, renewed by its holder, refused to another", async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    expect(await store.acquire(first, "warm", 60_000)).toBe(true);
    const before = await commandsRun();
    expect(await store.acquire(second, "holder-1", 1_000)).toBe(true);
    // The SET, and the INFO that read the count before.
    expect((await commandsRun()) - before).toBe(2);
    expect(await observer.get(keys().lease(second))).toBe("holder-1");
    expect(await store.acquire(second, "holder-2", 60_000)).toBe(false);
    expect(await observer.get(keys().lease(second))).toBe("holder-1");
    expect(await observer.pttl(keys().lease(second))).toBeLessThanOrEqual(1_000);
    expect(await store.acquire(second, "holder-1", 60_000)).toBe(true); // renewed
    expect(await observer.pttl(keys().lease(second))).toBeGreaterThan(1_000);
  });
});
