import { setTimeout as sleep } from "node:timers/promises";
import { clusterKeys, connectRedis, type RedisClient } from "@yiem/core";
import {
  findDeadLives,
  holderToken,
  newLifeId,
  silentLogger,
  startFailureDetector,
} from "@yiem/core/internal";
import { startTestRedis, type TestRedis, uniquePrefix } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A coordinator that has just started gives expired lives one more TTL only when Redis itself
 * is younger than the TTL (restarted: no process could beat); on a Redis up for longer, a
 * process that died while no coordinator ran is found dead at the first look
 * (docs/RELIABILITY.md, "Failure detector"). On a private Redis, started by this file, so its
 * uptime is known to be short.
 */

let server: TestRedis;
let redis: RedisClient;

beforeAll(async () => {
  server = await startTestRedis({ privateServer: true });
  redis = connectRedis(server.url);
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

/** Seconds this Redis has been up (INFO server). */
async function uptimeS(): Promise<number> {
  const info = await redis.info("server");
  return Number(/uptime_in_seconds:(\d+)/.exec(info)?.[1] ?? 0);
}

/** A life whose heartbeat ran out long ago (its process was killed while no coordinator ran). */
async function expiredLife(prefix: string): Promise<string> {
  const life = newLifeId();
  await redis.zadd(clusterKeys(prefix).alive, 1, life);
  return life;
}

type Fate = "graced" | "buried";

/**
 * What a coordinator started now does first with `life`: give it a TTL more, or bury it.
 * `ownBeatRefusedAt`: when its own process's heartbeat last failed.
 */
async function firstFateOf(
  prefix: string,
  life: string,
  ttlMs: number,
  ownBeatRefusedAt?: () => number,
): Promise<Fate> {
  const keys = clusterKeys(prefix);
  const detector = startFailureDetector({
    ...{ command: redis, keys, log: silentLogger, ttlMs, pollMs: 20 },
    queues: async () => [],
    maxStalledCount: 1,
    onDeaths: () => {},
    ownLife: newLifeId(),
    ...(ownBeatRefusedAt ? { ownBeatRefusedAt } : {}),
  });
  try {
    for (;;) {
      if ((await redis.zscore(keys.dead, life)) !== null) {
        expect(detector.holderIsDead(holderToken(life, "c-1"))).toBe(true);
        return "buried";
      }
      if (Number(await redis.zscore(keys.alive, life)) > 1) return "graced";
      await sleep(5);
    }
  } finally {
    detector.stop();
  }
}

describe("faults: the failure detector's first look after a coordinator starts", () => {
  it("gives an expired life a TTL more when Redis is younger than the TTL (restarted)", async () => {
    const prefix = uniquePrefix();
    const life = await expiredLife(prefix);
    expect(await firstFateOf(prefix, life, 3_600_000)).toBe("graced");
    const found = await findDeadLives(redis, clusterKeys(prefix), 3_600_000, "none");
    expect(found.expired).toEqual([]); // it has a TTL to beat again
  });

  it("finds an expired life dead at once when Redis has been up longer than the TTL", async () => {
    while ((await uptimeS()) < 1) await sleep(50);
    const prefix = uniquePrefix();
    const life = await expiredLife(prefix);
    expect(await firstFateOf(prefix, life, 500)).toBe("buried");
  });

  it("gives an expired life a TTL more within a TTL of a failed beat of its own process (Redis refused every beat then)", async () => {
    while ((await uptimeS()) < 2) await sleep(50); // older than the TTL: no grace for its age
    const prefix = uniquePrefix();
    const life = await expiredLife(prefix);
    const refusedAt = Date.now();
    expect(await firstFateOf(prefix, life, 1000, () => refusedAt)).toBe("graced");
    const other = await expiredLife(prefix);
    expect(await firstFateOf(prefix, other, 1000, () => refusedAt - 10_000)).toBe("buried");
  });

  it("keeps the grace after a reconnect, whatever Redis' age", async () => {
    while ((await uptimeS()) < 1) await sleep(50);
    const prefix = uniquePrefix();
    const life = await expiredLife(prefix);
    const alsoYoung = await findDeadLives(redis, clusterKeys(prefix), 3_600_000, "ifRedisIsYoung");
    expect(alsoYoung.expired).toEqual([]); // Redis younger than this TTL: graced
    await redis.zadd(clusterKeys(prefix).alive, 1, life);
    const afterReconnect = await findDeadLives(redis, clusterKeys(prefix), 500, "all");
    expect(afterReconnect.expired).toEqual([]);
    await redis.zadd(clusterKeys(prefix).alive, 1, life);
    const older = await findDeadLives(redis, clusterKeys(prefix), 500, "ifRedisIsYoung");
    expect(older.expired).toEqual([life]);
  });
});
