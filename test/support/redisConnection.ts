import { connectRedis, type RedisClient } from "@yiem/core";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";

/** A test file's Redis and one connection to it, opened before its tests and closed after. */
export interface TestRedisConnection {
  /** The Redis (its URL and the file's own key prefix). */
  readonly server: TestRedis;
  /** A connection to it. */
  readonly redis: RedisClient;
}

/**
 * Starts a test Redis (`startTestRedis`) and connects to it before the file's tests, and
 * closes both after them. Read the fields inside tests and hooks, once they have run.
 *
 * @example const t = useRedisConnection(); it("…", async () => { await t.redis.get("k"); });
 */
export function useRedisConnection(): TestRedisConnection {
  let server: TestRedis | undefined;
  let redis: RedisClient | undefined;
  beforeAll(async () => {
    server = await startTestRedis();
    redis = connectRedis(server.url);
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error("the test Redis is not open yet (use it inside tests)");
    return value;
  };
  return {
    get server() {
      return opened(server);
    },
    get redis() {
      return opened(redis);
    },
  };
}

/**
 * A connection in `MONITOR` mode to the Redis at `url` (ioredis's `monitor()`); the caller
 * disconnects it. ioredis monitors on a duplicate of the connection it is called on: that one
 * is made lazy here and never connects (one left connected outlived its test and, once its
 * Redis stopped, reconnected for the rest of the fork, with an unhandled error each time).
 */
export async function openMonitor(url: string): Promise<Redis> {
  return new Redis(url, { lazyConnect: true }).monitor();
}
