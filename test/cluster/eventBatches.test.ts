import { randomUUID } from "node:crypto";
import {
  type AgentEvent,
  clusterKeys,
  connectRedis,
  type RedisClient,
  readEventsAfter,
} from "@yiem/core";
import { createEventPublisher } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * A run's events sent one after another go out together, one script per session, and still
 * in their place among the connection's other commands. Checked on a real Redis through what
 * Redis itself counts and stores.
 */

let server: TestRedis;
let redis: RedisClient;
let observer: RedisClient;
const keys = () => clusterKeys(server.prefix);

beforeAll(async () => {
  server = await startTestRedis();
  redis = connectRedis(server.url);
  observer = connectRedis(server.url);
});

afterAll(async () => {
  await redis.quit();
  await observer.quit();
  await server.stop();
});

/** Script calls Redis has run so far (`INFO commandstats`). */
async function scriptCalls(): Promise<number> {
  const info = await observer.info("commandstats");
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

function turnStart(): AgentEvent {
  return { type: "turnStart" } as AgentEvent;
}

function textDelta(delta: string): AgentEvent {
  return { type: "messageUpdate", delta } as unknown as AgentEvent;
}

describe("event batches", () => {
  it("sends events emitted one after another as one script, numbered in order", async () => {
    const sessionId = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    await publisher.emit(turnStart()); // loads the batch script: the measure starts warm
    await publisher.emit(turnStart());
    await publisher.flush();
    const before = await scriptCalls();
    for (let i = 0; i < 5; i++) await publisher.emit(turnStart());
    await publisher.flush();
    expect((await scriptCalls()) - before).toBe(1);
    const stored = await readEventsAfter(redis, keys(), sessionId, 0);
    expect(stored.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("runs queued events before any command sent after them on the same connection", async () => {
    const sessionId = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    void publisher.emit(turnStart());
    void publisher.emit(turnStart());
    // Sent right behind the events, in the same pass of the event loop: it must see them.
    const seen = await redis.xrange(keys().stream(sessionId), "-", "+");
    expect(seen).toHaveLength(2);
    await publisher.flush();
  });

  it("gives a live event in a batch the number of the stored event before it", async () => {
    const sessionId = randomUUID();
    const subscriber = connectRedis(server.url);
    const live: Array<{ seq: number; live?: boolean; delta?: string }> = [];
    subscriber.on("message", (_channel, text: string) => live.push(JSON.parse(text)));
    await subscriber.subscribe(keys().eventChannel(sessionId));
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    await publisher.emitLive(textDelta("a"));
    await publisher.emit(turnStart());
    await publisher.emitLive(textDelta("b"));
    await publisher.emit(turnStart());
    await publisher.emitLive(textDelta("c"));
    await publisher.flush();
    await expect.poll(() => live.length).toBe(5);
    expect(live.map((event) => [event.seq, event.live === true])).toEqual([
      [0, true],
      [1, false],
      [1, true],
      [2, false],
      [2, true],
    ]);
    await subscriber.quit();
  });
});
