import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
import type { ScriptedReply } from "@yiem/testing";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { recordFigure } from "../support/faults.js";

const cluster = useTestCluster(async () => {
  const respond = (): ScriptedReply => ({
    kind: "toolCalls",
    calls: [{ id: "w1", name: "sleepFor", arguments: { ms: 4000, label: "w", steps: 40 } }],
  });
  let turn = 0;
  return {
    workers: 1,
    model: {
      respond: (request) =>
        ++turn % 2 === 1 ? respond() : { kind: "text", text: `done ${request.index}` },
    },
  };
});

/** Kills every pub/sub connection of Redis, over and over, for `ms`: subscribers are cut off. */
async function cutOffSubscribers(redisUrl: string, ms: number): Promise<number> {
  const admin = new Redis(redisUrl);
  let kills = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    kills += Number(await admin.call("CLIENT", "KILL", "TYPE", "pubsub"));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  admin.disconnect();
  return kills;
}

describe("faults: an event watcher is cut off", () => {
  it("has every event exactly once, in sequence, after it reconnects", async () => {
    const sessionId = randomUUID();
    const seen: BusEvent[] = [];
    const watching = (async () => {
      for await (const event of cluster.client.events(sessionId, { untilAgentEnd: true }))
        seen.push(event);
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { runId } = await cluster.client.send("go", { sessionId });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const kills = await cutOffSubscribers(cluster.redis.url, 3000);
    await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    await watching;
    const replay: BusEvent[] = [];
    for await (const event of cluster.client.events(sessionId, {
      fromStart: true,
      untilAgentEnd: true,
    }))
      replay.push(event);
    expect(kills).toBeGreaterThan(0);
    const stored = seen.filter((e) => !e.live); // streamed answer text is live only, never replayed
    expect(stored.map((e) => e.seq)).toEqual(replay.map((_, i) => i + 1));
    expect(stored).toEqual(replay);
    expect(seen.filter((e) => e.type === "toolExecUpdate")).toHaveLength(40);
    await recordFigure({
      scenario: "event watcher cut off for 3 s",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: `${kills} connections killed; ${stored.length} events, each once`,
    });
  });
});
