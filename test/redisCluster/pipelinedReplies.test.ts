import { randomUUID } from "node:crypto";
import { type AgentEvent, clusterKeys, connectRedis, readEventsAfter } from "@yiem/core";
import { createEventPublisher, keySlot, SessionAgents } from "@yiem/core/internal";
import { redisSupportsCluster, startTestRedisCluster, type TestRedisCluster } from "@yiem/testing";
import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A connection's queued events go out ahead of the commands sent after them
 * (state/eventBatches.ts), and a pipeline sent on it still gets its own replies: the
 * `WAIT` behind a replica-acknowledged write (a session's agent claim, a durable script) must
 * not send another session's queued events between the pipeline's commands, whose bytes go
 * out only once all of them are in. Checked on a real Redis Cluster with two sessions on one
 * master.
 */

let redisCluster: TestRedisCluster;
let redis: Cluster;
const keys = clusterKeys("yiem-pipelined", { cluster: true, shards: 3 });

beforeAll(async () => {
  redisCluster = await startTestRedisCluster();
  redis = connectRedis({ clusterNodes: redisCluster.nodes }) as Cluster;
  await redis.ping(); // ready: the client has read the slot table
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await redisCluster?.stop();
});

/** The master serving `sessionId`'s keys. */
function masterOf(sessionId: string): string | undefined {
  return redis.slots[keySlot(keys.sessionAgent(sessionId))]?.[0];
}

/** A new session id whose keys live on the same master as `sessionId`'s. */
function sessionBeside(sessionId: string): string {
  for (;;) {
    const other = randomUUID();
    if (masterOf(other) === masterOf(sessionId)) return other;
  }
}

function turnStart(): AgentEvent {
  return { type: "turnStart" } as AgentEvent;
}

describe.skipIf(!redisSupportsCluster())("pipelines among queued events on a Redis Cluster", () => {
  it("claims a session's agent with a replica's acknowledgement while another session's events are queued", async () => {
    const claimed = randomUUID();
    const other = sessionBeside(claimed);
    const publisher = createEventPublisher(redis, keys, { sessionId: other, runId: "r1" });
    await publisher.emit(turnStart()); // loads the batch script on the node
    await publisher.flush();
    const agents = new SessionAgents(redis, keys, { replicas: 1, timeoutMs: 1_000 });

    // The other session's event is queued; the claim (SET NX GET, then WAIT) is sent in the same pass.
    void publisher.emit(turnStart());
    const owner = await agents.claim(claimed, "support");
    await publisher.flush();

    expect(owner).toBe("support"); // not the other session's batch reply, `[2, <bytes>]`
    expect(await agents.read(claimed)).toBe("support");
    expect(await agents.claim(claimed, "ops")).toBe("support");
    const stored = await readEventsAfter(redis, keys, other, 0);
    expect(stored.map((event) => event.seq)).toEqual([1, 2]);
  });

  it("gives every command of a pipeline its own reply while another session's events are queued", async () => {
    const key = keys.sessionAgent(randomUUID());
    const other = sessionBeside(key.slice(key.indexOf("{") + 1, key.indexOf("}")));
    const publisher = createEventPublisher(redis, keys, { sessionId: other, runId: "r1" });
    await publisher.emit(turnStart());
    await publisher.flush();

    void publisher.emit(turnStart());
    const replies = await redis
      .pipeline()
      .set(key, "a", "EX", 60, "NX", "GET")
      .wait(0, 0)
      .get(key)
      .exec();
    await publisher.flush();

    expect(replies).toEqual([
      [null, null],
      [null, 0],
      [null, "a"],
    ]);
    expect((await readEventsAfter(redis, keys, other, 0)).map((event) => event.seq)).toEqual([
      1, 2,
    ]);
  });
});
