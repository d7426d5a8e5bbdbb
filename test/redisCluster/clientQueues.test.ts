import { once } from "node:events";
import { setImmediate as nextTurn } from "node:timers/promises";
import { connectRedis, type RedisClient } from "@yiem/core";
import { ClientQueues } from "@yiem/core/internal";
import { redisSupportsCluster, startTestRedisCluster, type TestRedisCluster } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A client's BullMQ queues (`ClientQueues`, what `YiemClient` reads request jobs through) on a
 * real Redis Cluster. A cluster connection says `connect` (nodes found, its ready check still
 * out) a moment before `ready`; a BullMQ queue made on it then, with no offline queue, failed
 * its first commands and stayed failed: a new client's `waitForResponse` never found the job
 * of an answered run (a CI run timed out after 20 s on it).
 */

let redisCluster: TestRedisCluster;
const opened: RedisClient[] = [];

beforeAll(async () => {
  redisCluster = await startTestRedisCluster();
}, 60_000);

afterAll(async () => {
  for (const connection of opened) connection.disconnect();
  await redisCluster?.stop();
});

/** A client's command connection (no offline queue), as `YiemClient` makes it. */
function connectAsClient(): RedisClient {
  const connection = connectRedis(
    { clusterNodes: redisCluster.nodes },
    { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
  );
  connection.on("error", () => undefined);
  opened.push(connection);
  return connection;
}

async function readyOf(connection: RedisClient): Promise<void> {
  if (connection.status !== "ready") await once(connection, "ready");
}

describe.skipIf(!redisSupportsCluster())("a client's queues on a Redis Cluster", () => {
  it("opens a queue asked for between the connection's `connect` and `ready`, and it answers", async () => {
    const connection = connectAsClient();
    while (connection.status !== "connect") await nextTurn();
    const queues = new ClientQueues(connection, `${redisCluster.prefix}:bull`, () =>
      readyOf(connection),
    );
    const queue = await queues.open("{coordinator}");
    expect(await queue.getJob("no-such-job")).toBeUndefined();
    await queues.close();
  });

  it("opens a queue again after an open that failed", async () => {
    const connection = connectAsClient();
    let refusals = 1;
    const queues = new ClientQueues(connection, `${redisCluster.prefix}:bull`, async () => {
      if (refusals-- > 0) throw new Error("Redis unreachable");
      await readyOf(connection);
    });
    await expect(queues.open("{coordinator}")).rejects.toThrow("Redis unreachable");
    const queue = await queues.open("{coordinator}");
    expect(await queue.getJob("no-such-job")).toBeUndefined();
    await queues.close();
  });
});
