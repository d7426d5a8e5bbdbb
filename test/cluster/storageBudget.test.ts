import { randomUUID } from "node:crypto";
import { type BusEvent, eventTextsOf } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

/** The turn: 64 calls of (almost) 256 KiB of arguments each, 16 MiB in all. */
const CALLS = 64;
const PAD = 255 * 1024;
const ARGUMENT_BYTES = CALLS * PAD;
/** The replay stream's byte budget in this file: small, so one run of large results passes it. */
const STREAM_MAX_BYTES = 1024 * 1024;
const ECHOES = 4;
const ECHO_TEXT = 150 * 1024;

/** `large arguments`: 64 `sleepFor` calls carrying a 255 KiB `pad`; `large results`: 4 `echoText` calls of 150 KiB. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "stored" };
  const text = String(messages.at(-1)?.content);
  const calls =
    text === "large arguments"
      ? Array.from({ length: CALLS }, (_, i) => ({
          id: `big${i}`,
          name: "sleepFor",
          arguments: { ms: 0, label: `c${i}`, pad: String(i % 10).repeat(PAD) },
        }))
      : Array.from({ length: ECHOES }, (_, i) => ({
          id: `echo${i}`,
          name: "echoText",
          arguments: { text: String(i).repeat(ECHO_TEXT) },
        }));
  return { kind: "toolCalls", calls };
}

const cluster = useTestCluster({
  workers: 2,
  model: { respond },
  redis: { privateServer: true },
  env: {
    YIEM_EVENT_STREAM_MAX_BYTES: String(STREAM_MAX_BYTES),
    // This file is about storage, not failover: a loaded CI machine needs more than the test
    // clusters' 3 s lease to write a 32 MiB transcript append (the run was resumed, once).
    YIEM_LEASE_MS: "20000",
    YIEM_LOCK_MS: "30000",
  },
});

/** `MEMORY USAGE` of every key under the prefix whose name contains `part`, by key. */
async function memoryOfKeys(part: string): Promise<Map<string, number>> {
  const redis = cluster.connectRedis();
  const sizes = new Map<string, number>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${cluster.redis.prefix}:*`);
    cursor = next;
    for (const key of keys.filter((k) => k.includes(part)))
      sizes.set(key, Number(await redis.memory("USAGE", key, "SAMPLES", 0)));
  } while (cursor !== "0");
  redis.disconnect();
  return sizes;
}

function sum(sizes: Iterable<number>): number {
  let total = 0;
  for (const size of sizes) total += size;
  return total;
}

/** The bytes of event JSON in a session's replay stream, and its events' numbers. */
async function streamOf(sessionId: string): Promise<{ bytes: number; seqs: number[] }> {
  const redis = cluster.connectRedis();
  const entries = await redis.xrange(`${cluster.redis.prefix}:s:{${sessionId}}:events`, "-", "+");
  redis.disconnect();
  const events = entries.flatMap(([, fields]) => eventTextsOf(fields));
  const seqs = events.map((text) => (JSON.parse(text) as BusEvent).seq);
  return { bytes: sum(events.map((text) => Buffer.byteLength(text))), seqs };
}

async function collect(sessionId: string, fromStart: boolean): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  for await (const event of cluster.client.events(sessionId, { fromStart, untilAgentEnd: true }))
    events.push(event);
  return events;
}

describe("what a session stores in Redis stays proportional to its input", () => {
  it("stores a turn of 64 × 255 KiB arguments once: the replay stream and live events carry previews, the transcript the whole arguments", async () => {
    const sessionId = randomUUID();
    const watching = collect(sessionId, false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { runId } = await cluster.client.send("large arguments", { sessionId });
    await cluster.client.waitForResponse(runId, { timeoutMs: 120_000 });
    const live = (await watching).filter((e) => !e.live);

    // Every key the turn wrote: the session's, and its tool jobs (named after the session).
    const sizes = await memoryOfKeys(sessionId);
    const session = [...sizes].filter(([key]) => key.includes(`{${sessionId}}`));
    const events = sizes.get(`${cluster.redis.prefix}:s:{${sessionId}}:events`) ?? 0;
    expect(events).toBeLessThan(0.05 * ARGUMENT_BYTES); // was 5× the arguments
    // The transcript keeps each call's arguments twice (parsed and the model's text): 2×.
    expect(sum(session.map(([, size]) => size))).toBeLessThan(2.2 * ARGUMENT_BYTES);
    // Plus the finished tool jobs (kept 1 h), each with its arguments: 3×, was 8×.
    expect(sum(sizes.values())).toBeLessThan(3.25 * ARGUMENT_BYTES);

    const replay = await collect(sessionId, true);
    expect(replay).toEqual(live); // watchers see what is stored, live or replayed
    const starts = replay.filter((e) => e.type === "toolExecStart");
    expect(starts).toHaveLength(CALLS);
    for (const [i, start] of starts.entries()) {
      expect(start).toMatchObject({ argsTruncated: true, argsBytes: expect.any(Number) });
      const args = start.type === "toolExecStart" ? start.arguments : {};
      expect(args).toMatchObject({ ms: 0, label: `c${i}`, pad: `${String(i % 10).repeat(256)}…` });
      expect(start.type === "toolExecStart" && start.argsBytes).toBeGreaterThan(PAD);
    }
    const answer = replay.find((e) => e.type === "messageEnd" && e.message.role === "assistant");
    const blocks = answer?.type === "messageEnd" ? answer.message.content : [];
    expect(blocks).toHaveLength(CALLS);
    for (const block of blocks) {
      expect(block).toMatchObject({ type: "toolCall", argsTruncated: true });
      expect(block).not.toHaveProperty("rawArguments");
    }
    const turnEnd = replay.find((e) => e.type === "turnEnd");
    expect(turnEnd?.type === "turnEnd" && turnEnd.message.content).toEqual(blocks);

    const stored = await cluster.client.messages(sessionId);
    const calls = stored.flatMap((m) => (m.role === "assistant" ? m.content : []));
    expect(calls).toHaveLength(CALLS);
    for (const call of calls) {
      expect(call.type === "toolCall" && String(call.arguments.pad)).toHaveLength(PAD);
      expect(call).not.toHaveProperty("argsTruncated");
    }
  }, 180_000);

  it("keeps a session's replay stream within YIEM_EVENT_STREAM_MAX_BYTES, trimming its oldest events, run after run", async () => {
    const sessionId = randomUUID();
    for (let run = 0; run < 2; run++) {
      const { runId } = await cluster.client.send("large results", { sessionId });
      await cluster.client.waitForResponse(runId, { timeoutMs: 60_000 });
      // Each run publishes each 150 KiB result four times (progress, end, message, turn): 2.4 MiB.
      const stream = await streamOf(sessionId);
      expect(stream.bytes).toBeLessThanOrEqual(STREAM_MAX_BYTES);
      const last = stream.seqs.at(-1) ?? 0;
      expect(stream.seqs).toEqual(stream.seqs.map((_, i) => last - stream.seqs.length + 1 + i));
      expect(stream.seqs[0]).toBeGreaterThan(1); // the oldest events went
    }
    const replay = await collect(sessionId, true);
    expect(replay.at(-1)?.type).toBe("agentEnd");
    expect(replay.map((e) => e.seq)).toEqual((await streamOf(sessionId)).seqs);
    const stored = await cluster.client.messages(sessionId);
    expect(stored.filter((m) => m.role === "toolResult")).toHaveLength(2 * ECHOES);
  }, 120_000);
});
