import { clusterKeys, connectRedis } from "@yiem/core";
import { keySlot } from "@yiem/core/internal";
import { redisSupportsCluster, startTestRedisCluster, type TestRedisCluster } from "@yiem/testing";
import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe.skipIf(!redisSupportsCluster())("key slots on a Redis Cluster", () => {
  let redisCluster: TestRedisCluster;
  let redis: Cluster;

  beforeAll(async () => {
    redisCluster = await startTestRedisCluster();
    redis = connectRedis({ clusterNodes: redisCluster.nodes }) as Cluster;
    await redis.ping(); // ready: the client has read the slot table
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await redisCluster?.stop();
  });

  it("computes the slot of a key as the cluster does, hash tags and UTF-8 included", async () => {
    const keys = [
      "foo",
      "yiem:s:{a-session}:messages",
      "{coordinator}",
      "x{}y",
      "a{b}c{d}",
      "ключ",
    ];
    const slots = await Promise.all(keys.map((key) => redis.cluster("KEYSLOT", key)));
    expect(keys.map(keySlot)).toEqual(slots.map(Number));
  });

  it("puts the three shards of a tool queue on three different masters", async () => {
    const keys = clusterKeys("yiem", { cluster: true, shards: 3 });
    for (const queue of [undefined, "gpu", "browser"]) {
      const owners = keys.toolQueues(queue).map((name) => redis.slots[keySlot(name)]?.[0]);
      expect(new Set(owners).size).toBe(3);
    }
  });
});
