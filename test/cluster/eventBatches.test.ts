import { randomUUID } from "node:crypto";
import {
  type AgentEvent,
  clusterKeys,
  connectRedis,
  eventTextsOf,
  latestSeq,
  type RedisClient,
  readEventsAfter,
  sumRunUsage,
} from "@yiem/core";
import {
  addJobLean,
  createEventPublisher,
  DURABLE_CONNECTION,
  eventBatchesOf,
  NOT_AS_EXPECTED,
  publishEvent,
  readEventPage,
  SessionStore,
} from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finalAnswer, toolResultMessage, userMessage } from "../support/messages.js";
import { openMonitor } from "../support/redisConnection.js";

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

/** Calls of `command` Redis has run so far, scripts' inner calls included (`INFO commandstats`). */
async function callsOf(command: string): Promise<number> {
  const info = await observer.info("commandstats");
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

/** The session's event counter of earlier versions (`:seq`), which no script names any more. */
function oldCounter(sessionId: string): string {
  return `${keys().prefix}:s:{${sessionId}}:seq`;
}

/** Script calls Redis has run so far. */
function scriptCalls(): Promise<number> {
  return callsOf("evalsha");
}

function publisher(sessionId: string) {
  return createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
}

function turnStart(): AgentEvent {
  return { type: "turnStart" } as AgentEvent;
}

function textEnd(text: string): AgentEvent {
  const message = {
    role: "user" as const,
    content: [{ type: "text" as const, text }],
    timestamp: 1,
  };
  return { type: "messageEnd", message } as AgentEvent;
}

function textDelta(delta: string): AgentEvent {
  return { type: "messageUpdate", delta } as unknown as AgentEvent;
}

/** The JSON texts of every event `sessionId`'s stream holds, in order (a batch's share an entry). */
async function storedTexts(sessionId: string): Promise<string[]> {
  const entries = await redis.xrange(keys().stream(sessionId), "-", "+");
  return entries.flatMap(([, fields]) => eventTextsOf(fields));
}

/**
 * Checks that `sessionId`'s stream holds `count` events numbered 1..count with no gap, each
 * entry's id the number of its last event and the running byte total of its events (each
 * event's JSON bytes, newlines between a batch's not counted) beside it.
 */
async function expectNumberedFromOne(sessionId: string, count: number): Promise<void> {
  const entries = await redis.xrange(keys().stream(sessionId), "-", "+");
  let total = 0;
  const seqs: number[] = [];
  for (const [id, fields] of entries) {
    for (const text of eventTextsOf(fields)) {
      total += Buffer.byteLength(text); // the script counts bytes, as the guess does
      seqs.push(JSON.parse(text).seq);
    }
    expect([id, fields[3]]).toEqual([`${seqs.at(-1)}-1`, String(total)]);
  }
  expect(seqs).toEqual(Array.from({ length: count }, (_, i) => i + 1));
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

  it("numbers a batch and adds up the stream's byte total from what the connection's last batch left, with no read, the same totals as one event at a time", async () => {
    const sessionId = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    await publisher.emit(turnStart()); // loads the scripts
    await publisher.emit(turnStart());
    await publisher.flush();
    const reads = async () => (await callsOf("incrby")) + (await callsOf("xrevrange"));
    const before = await reads();
    for (let i = 0; i < 5; i++) await publisher.emit(turnStart());
    await publisher.flush();
    void publisher.emit(textEnd("é ✓ 😀")); // bytes the script counts: more than its characters
    await publisher.flush();
    // No counter, and no read: the last batch's reply said where the stream stands.
    expect((await reads()) - before).toBe(0);
    await expectNumberedFromOne(sessionId, 8);
    expect(await latestSeq(redis, keys(), sessionId)).toBe(8);
    expect(await redis.exists(oldCounter(sessionId))).toBe(0);
  });

  it("stores a batch's events in one stream entry behind the first, which proves the guess: two XADDs for five events, every event read back after any number", async () => {
    const sessionId = randomUUID();
    const own = publisher(sessionId);
    await own.emit(turnStart()); // loads the scripts; the connection knows the stream ends at 1
    await own.flush();
    const before = await callsOf("xadd");
    for (let i = 0; i < 5; i++) void own.emit(turnStart());
    await own.flush();
    expect((await callsOf("xadd")) - before).toBe(2);
    await expectNumberedFromOne(sessionId, 6);
    // A reader that last saw an event in the middle of the batch's entry gets exactly the rest.
    for (const after of [0, 1, 2, 4, 5, 6]) {
      const events = await readEventsAfter(redis, keys(), sessionId, after);
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: 6 - after }, (_, i) => after + 1 + i),
      );
    }
    const page = await readEventPage(redis, keys(), sessionId, 3, 1);
    expect(page.events.map((event) => event.head.seq)).toEqual([4, 5, 6]);
  });

  it("numbers a live event ahead of a batch's stored ones by the guess the first stored one proves, with no read of the stream", async () => {
    const sessionId = randomUUID();
    const own = publisher(sessionId);
    await own.emit(turnStart());
    void own.emitLive(textDelta("d")); // loads the scripts
    await own.flush(); // the connection knows the stream ends at 1
    const subscriber = connectRedis(server.url);
    const live: Array<{ seq: number; live?: boolean }> = [];
    subscriber.on("message", (_channel, text: string) => {
      for (const line of text.split("\n")) live.push(JSON.parse(line));
    });
    await subscriber.subscribe(keys().eventChannel(sessionId));
    const before = await callsOf("xrevrange");
    void own.emitLive(textDelta("e"));
    void own.emit(turnStart());
    void own.emit(turnStart());
    await own.flush();
    expect((await callsOf("xrevrange")) - before).toBe(0);
    await expect.poll(() => live.length).toBe(3);
    expect(live.map((event) => [event.seq, event.live ?? false])).toEqual([
      [1, true],
      [2, false],
      [3, false],
    ]);
    await subscriber.quit();
    await expectNumberedFromOne(sessionId, 3);
  });

  it("keeps a batch's entries within 16 KiB of events, a larger event in one of its own, and the byte totals exact", async () => {
    const sessionId = randomUUID();
    const own = publisher(sessionId);
    void own.emit(textEnd("x".repeat(6000)));
    void own.emit(textEnd("y".repeat(6000)));
    void own.emit(textEnd("z".repeat(6000))); // past 16 KiB with the two before: a new entry
    void own.emit(textEnd("w".repeat(20_000))); // larger alone: its own
    void own.emit(turnStart());
    await own.flush();
    await expectNumberedFromOne(sessionId, 5);
    const entries = await redis.xrange(keys().stream(sessionId), "-", "+");
    expect(entries.map(([id]) => id)).toEqual(["2-1", "3-1", "4-1", "5-1"]);
  });

  it("numbers the first events of a session believed empty (no transcript yet) from 1 with no read, and a wrong belief's after what is there", async () => {
    const loading = publisher(randomUUID());
    await loading.emit(turnStart()); // loads the scripts
    await loading.flush();
    const fresh = randomUUID();
    eventBatchesOf(redis, keys()).believeEmpty(fresh);
    const before = await callsOf("xrevrange");
    for (let i = 0; i < 3; i++) void publisher(fresh).emit(turnStart());
    await publisher(fresh).flush();
    expect((await callsOf("xrevrange")) - before).toBe(0);
    // Believed empty but not: another writer stored two events first. Read once, then on.
    const stale = randomUUID();
    const other = connectRedis(server.url);
    await publishEvent(other, keys(), { sessionId: stale, runId: "r1" }, textEnd("elsewhere"));
    await publishEvent(other, keys(), { sessionId: stale, runId: "r1" }, textEnd("again"));
    await other.quit();
    eventBatchesOf(redis, keys()).believeEmpty(stale);
    const between = await callsOf("xrevrange");
    for (let i = 0; i < 3; i++) void publisher(stale).emit(turnStart());
    await publisher(stale).flush();
    expect((await callsOf("xrevrange")) - between).toBe(1);
    await expectNumberedFromOne(fresh, 3);
    await expectNumberedFromOne(stale, 5);
  });

  it("numbers after the events another writer stored since the connection's last batch, read once, with no gap", async () => {
    const sessionId = randomUUID();
    const own = publisher(sessionId);
    for (let i = 0; i < 2; i++) await own.emit(turnStart());
    await own.flush(); // this connection knows the stream ends at 2
    const other = connectRedis(server.url); // another process: a worker, a deciding coordinator
    await publishEvent(other, keys(), { sessionId, runId: "r1" }, textEnd("from elsewhere"));
    await publishEvent(other, keys(), { sessionId, runId: "r1" }, textEnd("and again"));
    await other.quit();
    const before = await callsOf("xrevrange");
    for (let i = 0; i < 2; i++) void own.emit(turnStart());
    await own.flush();
    expect((await callsOf("xrevrange")) - before).toBe(1); // the guess (2) proved wrong: read
    await own.emit(turnStart());
    await own.flush();
    expect((await callsOf("xrevrange")) - before).toBe(1); // and known again from that reply
    await expectNumberedFromOne(sessionId, 7);
  });

  it("gives a live event ahead of a batch's stored ones the stored number, whatever the connection guessed", async () => {
    const sessionId = randomUUID();
    const subscriber = connectRedis(server.url);
    const live: Array<{ seq: number; type: string; live?: boolean }> = [];
    subscriber.on("message", (_channel, text: string) => {
      for (const line of text.split("\n")) live.push(JSON.parse(line));
    });
    await subscriber.subscribe(keys().eventChannel(sessionId));
    const own = publisher(sessionId);
    await own.emit(turnStart());
    await own.flush(); // this connection knows the stream ends at 1
    const other = connectRedis(server.url);
    await publishEvent(other, keys(), { sessionId, runId: "r1" }, textEnd("from elsewhere"));
    await other.quit();
    void own.emitLive(textDelta("d"));
    void own.emit(turnStart());
    await own.flush();
    await expect.poll(() => live.length).toBe(4);
    expect(live.map((event) => [event.seq, event.type, event.live ?? false])).toEqual([
      [1, "turnStart", false],
      [2, "messageEnd", false],
      [2, "messageUpdate", true],
      [3, "turnStart", false],
    ]);
    await subscriber.quit();
  });

  it("goes on numbering a session's events from its stream's newest entry, whatever its old counter says", async () => {
    const sessionId = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    for (let i = 0; i < 3; i++) {
      await publisher.emit(turnStart());
      await publisher.flush(); // one entry each
    }
    await redis.xtrim(keys().stream(sessionId), "MAXLEN", 1); // only the newest stays
    await redis.set(oldCounter(sessionId), "1"); // an earlier version's counter, out of step
    await publisher.emit(turnStart());
    void publisher.emitLive(textDelta("d"));
    await publisher.flush();
    const stored = await readEventsAfter(redis, keys(), sessionId, 0);
    expect(stored.map((event) => event.seq)).toEqual([3, 4]);
    expect(await latestSeq(redis, keys(), sessionId)).toBe(4);
  });

  it("runs queued events before any command sent after them on the same connection", async () => {
    const sessionId = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    void publisher.emit(turnStart());
    void publisher.emit(turnStart());
    // Sent right behind the events, in the same pass of the event loop: it must see them.
    expect(await storedTexts(sessionId)).toHaveLength(2);
    await publisher.flush();
  });

  it("sends a session's queued events ahead of its own commands, not ahead of another session's", async () => {
    const a = randomUUID();
    const store = new SessionStore(redis, keys());
    const publisher = createEventPublisher(redis, keys(), { sessionId: a, runId: "r1" });
    await publisher.emit(turnStart()); // loads the scripts: the measure starts warm
    await publisher.flush();
    expect(await store.acquire(randomUUID(), "t", 60_000)).toBe(true);
    const before = await scriptCalls();
    void publisher.emit(turnStart());
    const other = store.acquire(randomUUID(), "t", 60_000); // another session's command
    void publisher.emit(turnStart());
    // A command of the session's own keys, sent behind both events: it sees them.
    expect(await storedTexts(a)).toHaveLength(3);
    expect(await other).toBe(true);
    // One batch of both events (the other session's lease is a plain SET): not one batch on
    // each side of the other session's command.
    expect((await scriptCalls()) - before).toBe(1);
  });

  it("sends every session's queued events ahead of a command on no session's keys", async () => {
    const sessionId = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    void publisher.emit(turnStart());
    await redis.set(`${keys().prefix}:unrelated:${sessionId}`, "1", "EX", 60);
    // Read on another connection once that command was answered: the event was ahead of it.
    expect(await observer.xlen(keys().stream(sessionId))).toBe(1);
    await publisher.flush();
  });

  it("gives a pipeline's commands their own replies when one behind the first (a WAIT) is on no session's keys", async () => {
    const other = randomUUID();
    const publisher = createEventPublisher(redis, keys(), { sessionId: other, runId: "r1" });
    await publisher.emit(turnStart()); // loads the batch script
    await publisher.flush();
    const key = `${keys().prefix}:s:{${randomUUID()}}:agent`;
    void publisher.emit(turnStart()); // queued: not of the pipeline's session
    // A replica-acknowledged claim's shape: its write, then WAIT (no key), in one pipeline.
    const replies = await redis.pipeline().set(key, "a", "NX", "GET").wait(0, 0).get(key).exec();
    await publisher.flush();
    expect(replies).toEqual([
      [null, null],
      [null, 0],
      [null, "a"],
    ]);
    const stored = await readEventsAfter(redis, keys(), other, 0);
    expect(stored.map((event) => event.seq)).toEqual([1, 2]);
  });

  it("keeps a session's queued events queued past BullMQ's take of a job, and sends them ahead of a job's add", async () => {
    const sessionId = randomUUID();
    const name = `q-${sessionId}`;
    const own = connectRedis(server.url, DURABLE_CONNECTION); // a worker's: BullMQ blocks on it
    const bull = { connection: own, prefix: keys().bullPrefix };
    const queue = new Queue(name, bull);
    const worker = new Worker(name, undefined, { ...bull, autorun: false });
    await queue.add("job", {}, { jobId: "first" }); // loads BullMQ's scripts on the connection
    const order: string[] = [];
    const monitor = await openMonitor(server.url);
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (!String(args[0]).toLowerCase().startsWith("eval")) return; // EVAL the first time
      const sent = args.slice(3).join(" ");
      if (sent.includes(keys().stream(sessionId))) order.push("events");
      else if (sent.includes(`${name}:wait`)) order.push(args[2] === "11" ? "take" : "add");
    });
    const publisher = createEventPublisher(own, keys(), { sessionId, runId: "r1" });
    void publisher.emit(turnStart());
    const taken = await worker.getNextJob("token-1"); // no event waits on a take: not sent first
    void publisher.emit(turnStart());
    await queue.add("job", {}, { jobId: "second" }); // a job goes behind its call's events
    await publisher.flush();
    await new Promise((resolve) => setTimeout(resolve, 50)); // MONITOR's last lines
    monitor.disconnect();
    await worker.close();
    await queue.close();
    await own.quit();
    expect(taken?.id).toBe("first");
    expect(order).toEqual(["take", "events", "events", "add"]);
  });

  it("sends a tool job's add behind its own session's events only, the ones sent first for it", async () => {
    const [own, other] = [randomUUID(), randomUUID()];
    const name = "tools-batches";
    const connection = connectRedis(server.url, DURABLE_CONNECTION);
    const queue = new Queue(name, { connection, prefix: keys().bullPrefix });
    await queue.add("warm", {}, { jobId: `warm-${own}` }); // loads BullMQ's scripts
    const order: string[] = [];
    const monitor = await openMonitor(server.url);
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (!String(args[0]).toLowerCase().startsWith("eval")) return; // EVAL the first time
      const sent = args.slice(3).join(" ");
      if (sent.includes(keys().stream(own))) order.push("own events");
      else if (sent.includes(keys().stream(other))) order.push("other events");
      else if (sent.includes(`${name}:wait`)) order.push("add");
    });
    const publishers = [own, other].map((sessionId) =>
      createEventPublisher(connection, keys(), { sessionId, runId: "r1" }),
    );
    for (const publisher of publishers) void publisher.emit(turnStart());
    eventBatchesOf(connection, keys()).sendSession(own); // what the remote executor does first
    await queue.add("call", {}, { jobId: `call-${own}` });
    await Promise.all(publishers.map((publisher) => publisher.flush()));
    await new Promise((resolve) => setTimeout(resolve, 50)); // MONITOR's last lines
    monitor.disconnect();
    await queue.close();
    await connection.quit();
    expect(order).toEqual(["own events", "add", "other events"]);
  });

  it("sends a pass's lean tool job adds in one call, behind each of their sessions' events", async () => {
    const sessions = [randomUUID(), randomUUID()];
    const name = "tools-lean-batches";
    const connection = connectRedis(server.url, DURABLE_CONNECTION);
    const queue = new Queue(name, { connection, prefix: keys().bullPrefix });
    await queue.add("warm", {}, { jobId: "warm" }); // loads BullMQ's scripts, sets the meta
    const order: string[] = [];
    const monitor = await openMonitor(server.url);
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (!String(args[0]).toLowerCase().startsWith("eval")) return; // EVAL the first time
      const sent = args.slice(3).join(" ");
      const session = sessions.findIndex((sessionId) => sent.includes(keys().stream(sessionId)));
      if (session >= 0) order.push(`events ${session}`);
      else if (sent.includes(`${name}:wait`))
        order.push(
          `add ${sessions.filter((sessionId) => sent.includes(`call-${sessionId}`)).length}`,
        );
    });
    const publishers = sessions.map((sessionId) =>
      createEventPublisher(connection, keys(), { sessionId, runId: "r1" }),
    );
    for (const publisher of publishers) void publisher.emit(turnStart());
    const adds = sessions.map((sessionId) => {
      eventBatchesOf(connection, keys()).sendSession(sessionId); // the remote executor's beforeAdd
      return addJobLean(queue, "call", {}, { jobId: `call-${sessionId}`, attempts: 1 });
    });
    await Promise.all(adds);
    await Promise.all(publishers.map((publisher) => publisher.flush()));
    await new Promise((resolve) => setTimeout(resolve, 50)); // MONITOR's last lines
    monitor.disconnect();
    await queue.close();
    await connection.quit();
    expect(order).toEqual(["events 0", "events 1", "add 2"]);
  });

  it("gives a live event in a batch the number of the stored event before it, all in one message", async () => {
    const sessionId = randomUUID();
    const subscriber = connectRedis(server.url);
    const live: Array<{ seq: number; live?: boolean; delta?: string }> = [];
    let messages = 0;
    subscriber.on("message", (_channel, text: string) => {
      messages++;
      for (const line of text.split("\n")) live.push(JSON.parse(line));
    });
    await subscriber.subscribe(keys().eventChannel(sessionId));
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    await publisher.emitLive(textDelta("a"));
    await publisher.emit(turnStart());
    await publisher.emitLive(textDelta("b"));
    await publisher.emit(turnStart());
    await publisher.emitLive(textDelta("c"));
    await publisher.flush();
    await expect.poll(() => live.length).toBe(5);
    expect(messages).toBe(1);
    expect(live.map((event) => [event.seq, event.live === true])).toEqual([
      [0, true],
      [1, false],
      [1, true],
      [2, false],
      [2, true],
    ]);
    await subscriber.quit();
  });

  it("gives a live event sent alone the number of the latest stored event", async () => {
    const sessionId = randomUUID();
    const subscriber = connectRedis(server.url);
    const seen: Array<{ seq: number; live?: boolean }> = [];
    subscriber.on("message", (_channel, text: string) => {
      for (const line of text.split("\n")) seen.push(JSON.parse(line));
    });
    await subscriber.subscribe(keys().eventChannel(sessionId));
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    await publisher.emitLive(textDelta("before any"));
    await publisher.flush();
    await publisher.emit(turnStart());
    await publisher.emit(turnStart());
    await publisher.flush();
    await publisher.emitLive(textDelta("after two"));
    await publisher.flush();
    await expect.poll(() => seen.length).toBe(4);
    expect(seen.map((event) => [event.seq, event.live === true])).toEqual([
      [0, true],
      [1, false],
      [2, false],
      [2, true],
    ]);
    await subscriber.quit();
  });

  it("sends a run's events and the transcript append among them as one script, in order", async () => {
    const sessionId = randomUUID();
    const store = new SessionStore(redis, keys());
    expect(await store.acquire(sessionId, "t1", 60_000)).toBe(true);
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    await store.appendMany(sessionId, "t1", [toolResultMessage("c0")]); // loads the script: warm
    await publisher.flush();
    const before = await scriptCalls();
    void publisher.emit(turnStart());
    const appended = store.appendMany(
      sessionId,
      "t1",
      [toolResultMessage("c1"), toolResultMessage("c2")],
      1,
    );
    void publisher.emit(turnStart());
    // Sent right behind, in the same pass: it sees the events and both messages.
    const [stream, messages] = await Promise.all([
      storedTexts(sessionId),
      redis.lrange(keys().messages(sessionId), 0, -1),
    ]);
    expect(await appended).toBe(true);
    expect((await scriptCalls()) - before).toBe(1);
    expect(stream).toHaveLength(2);
    expect(messages.map((m) => JSON.parse(m).toolCallId)).toEqual(["c0", "c1", "c2"]);
  });

  it("sends a final answer's append in the script of the streamed text before it", async () => {
    const sessionId = randomUUID();
    const store = new SessionStore(redis, keys());
    expect(await store.acquire(sessionId, "t1", 60_000)).toBe(true);
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    // Every script either way loaded first: the measure starts warm.
    await store.appendMany(sessionId, "t1", [toolResultMessage("c0")]);
    await store.append(sessionId, "t1", toolResultMessage("c1"));
    void publisher.emitLive(textDelta("wa"));
    void publisher.emitLive(textDelta("rm"));
    await publisher.flush();
    const before = await scriptCalls();
    void publisher.emitLive(textDelta("do"));
    void publisher.emitLive(textDelta("ne"));
    const answer = finalAnswer();
    expect(await store.append(sessionId, "t1", answer, 2)).toBe(true);
    expect((await scriptCalls()) - before).toBe(1);
    const messages = await redis.lrange(keys().messages(sessionId), 0, -1);
    expect(messages.map((m) => JSON.parse(m).role)).toEqual([
      "toolResult",
      "toolResult",
      "assistant",
    ]);
    expect(await store.append(sessionId, "t1", answer, 2)).toBe(true); // a resend: not twice
    expect(await redis.llen(keys().messages(sessionId))).toBe(3);
  });

  it("sends the next turn's drain in the script of the results' append, proven by it", async () => {
    const sessionId = randomUUID();
    const store = new SessionStore(redis, keys());
    await store.enqueueInput(sessionId, "in-1", "input", userMessage("hi"), Date.now() * 1024);
    expect(await store.acquire(sessionId, "t1", 60_000)).toBe(true);
    const start = await store.startRun(sessionId, "t1");
    if (start.kind !== "new") throw new Error(`expected a new run, got ${start.kind}`);
    await store.appendMany(sessionId, "t1", [toolResultMessage("c0")], 1); // loads the script: warm
    await store.enqueueInput(
      sessionId,
      "in-2",
      "input",
      userMessage("more"),
      Date.now() * 1024 + 1,
    );
    const before = {
      scripts: await scriptCalls(),
      get: await callsOf("get"),
      llen: await callsOf("llen"),
    };
    void publisher(sessionId).emit(turnStart());
    const appended = store.appendMany(sessionId, "t1", [toolResultMessage("c1")], 2);
    const drained = store.drainInputs(sessionId, "t1", 3, start.order);
    expect(await appended).toBe(true);
    expect(await drained).toMatchObject({ inputIds: ["in-2"] });
    expect((await scriptCalls()) - before.scripts).toBe(1);
    // One lease read (the append's), and no length read: the length the append's push returned
    // proved its guard, and the drain read neither.
    expect((await callsOf("get")) - before.get).toBe(1);
    expect((await callsOf("llen")) - before.llen).toBe(0);
    const messages = await redis.lrange(keys().messages(sessionId), 0, -1);
    expect(messages.map((m) => JSON.parse(m).toolCallId ?? JSON.parse(m).role)).toEqual([
      "user",
      "c0",
      "c1",
      "user",
    ]);
  });

  it("refuses an append fenced off inside a batch and still publishes the batch's events", async () => {
    const sessionId = randomUUID();
    const store = new SessionStore(redis, keys());
    expect(await store.acquire(sessionId, "holder", 60_000)).toBe(true);
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "r1" });
    void publisher.emit(turnStart());
    const stale = store.appendMany(sessionId, "not-the-holder", [toolResultMessage("x")]);
    const unexpected = store.appendMany(sessionId, "holder", [toolResultMessage("y")], 5);
    const landed = store.appendMany(sessionId, "holder", [toolResultMessage("z")], 0);
    void publisher.emit(turnStart());
    expect(await stale).toBe(false);
    expect(await unexpected).toBe(NOT_AS_EXPECTED);
    expect(await landed).toBe(true);
    await publisher.flush();
    const messages = await redis.lrange(keys().messages(sessionId), 0, -1);
    expect(messages.map((m) => JSON.parse(m).toolCallId)).toEqual(["z"]);
    const stored = await readEventsAfter(redis, keys(), sessionId, 0);
    expect(stored.map((event) => event.seq)).toEqual([1, 2]);
  });
});

describe("closing a run with its queued events", () => {
  /** A session with an open run held by `t1`; its store and the run's publisher. */
  async function openRun() {
    const sessionId = randomUUID();
    const store = new SessionStore(redis, keys());
    await store.enqueueInput(sessionId, "in-1", "input", userMessage("hi"), Date.now() * 1024);
    expect(await store.acquire(sessionId, "t1", 60_000)).toBe(true);
    expect((await store.startRun(sessionId, "t1")).kind).toBe("new");
    const publisher = createEventPublisher(redis, keys(), { sessionId, runId: "in-1" });
    return { sessionId, store, publisher };
  }

  function finish(run: Awaited<ReturnType<typeof openRun>>, token: string, queued: string[]) {
    const response = finalAnswer();
    const event = { type: "agentEnd" as const, response, usage: sumRunUsage([]) };
    const record = { runId: "in-1", inputIds: ["in-1"], event };
    return run.store.finishRun(run.sessionId, token, response, record, undefined, queued);
  }

  it("stores the run's queued events ahead of agentEnd in the script that closes it", async () => {
    const run = await openRun();
    await finish(await openRun(), "t1", []); // loads the script: the measure starts warm
    const first = run.publisher.emit(turnStart());
    void run.publisher.emitLive(textDelta("a"));
    void run.publisher.emit(turnStart());
    const queued = run.publisher.takeQueued();
    expect(queued?.writes.filter((w) => w === "s" || w === "l")).toEqual(["s", "l", "s"]);
    expect(run.publisher.takeQueued()).toBeUndefined();
    const before = await scriptCalls();
    expect(await finish(run, "t1", queued?.writes ?? [])).toBe("idle");
    queued?.settle();
    await first;
    expect((await scriptCalls()) - before).toBe(1);
    const stored = await readEventsAfter(redis, keys(), run.sessionId, 0);
    expect(stored.map((event) => [event.seq, event.type])).toEqual([
      [1, "turnStart"],
      [2, "turnStart"],
      [3, "agentEnd"],
    ]);
  });

  it("stores them when the lease is lost, numbered without a gap", async () => {
    const run = await openRun();
    void run.publisher.emit(turnStart());
    const queued = run.publisher.takeQueued();
    expect(await finish(run, "not-the-holder", queued?.writes ?? [])).toBe(false);
    queued?.settle();
    await run.publisher.emit(turnStart());
    await run.publisher.flush();
    const stored = await readEventsAfter(redis, keys(), run.sessionId, 0);
    expect(stored.map((event) => [event.seq, event.type])).toEqual([
      [1, "turnStart"],
      [2, "turnStart"],
    ]);
  });

  /** Closes `run` with `token`, its final answer appended by the close itself (`finishRun`). */
  function finishWithAnswer(run: Awaited<ReturnType<typeof openRun>>, token: string) {
    const response = finalAnswer();
    const event = { type: "agentEnd" as const, response, usage: sumRunUsage([]) };
    const record = { runId: "in-1", inputIds: ["in-1"], event };
    void run.publisher.emit(turnStart()); // emitted before the answer: stored whatever happens
    const queued = run.publisher.takeQueued()?.writes ?? [];
    const afterAnswer = [
      ...run.publisher.onlyIfClosed({ type: "messageEnd", message: response }),
      ...run.publisher.onlyIfClosed({
        type: "turnEnd",
        turn: 1,
        message: response,
        toolResults: [],
      }),
    ];
    const answer = { message: response, knownLength: 1 };
    return run.store.finishRun(
      run.sessionId,
      token,
      response,
      record,
      undefined,
      [...queued, ...afterAnswer],
      answer,
    );
  }

  it("appends the final answer and stores its events before agentEnd, in the script that closes the run", async () => {
    const run = await openRun();
    await finish(await openRun(), "t1", []); // loads the script: the measure starts warm
    const before = await scriptCalls();
    expect(await finishWithAnswer(run, "t1")).toBe("idle");
    expect((await scriptCalls()) - before).toBe(1);
    const messages = await redis.lrange(keys().messages(run.sessionId), 0, -1);
    expect(messages.map((m) => JSON.parse(m).role)).toEqual(["user", "assistant"]);
    const stored = await readEventsAfter(redis, keys(), run.sessionId, 0);
    expect(stored.map((event) => [event.seq, event.type])).toEqual([
      [1, "turnStart"],
      [2, "messageEnd"],
      [3, "turnEnd"],
      [4, "agentEnd"],
    ]);
  });

  it("appends no answer and stores none of its events when the lease is lost", async () => {
    const run = await openRun();
    expect(await finishWithAnswer(run, "not-the-holder")).toBe(false);
    const messages = await redis.lrange(keys().messages(run.sessionId), 0, -1);
    expect(messages.map((m) => JSON.parse(m).role)).toEqual(["user"]);
    const stored = await readEventsAfter(redis, keys(), run.sessionId, 0);
    expect(stored.map((event) => [event.seq, event.type])).toEqual([[1, "turnStart"]]);
  });

  it("leaves a session's writes queued when they hold a transcript append", async () => {
    const run = await openRun();
    void run.publisher.emit(turnStart());
    const appended = run.store.appendMany(run.sessionId, "t1", [toolResultMessage("c1")]);
    expect(run.publisher.takeQueued()).toBeUndefined();
    expect(await appended).toBe(true);
  });
});

describe("stored events", () => {
  it("store each event as the event with its origin, its seq and its time, whatever they share", async () => {
    const sessionId = randomUUID();
    const path = [{ agent: "root", sessionId: "root-session", callKey: "k1" }];
    const origin = { sessionId, runId: "r1", workerId: undefined, path };
    const publisher = createEventPublisher(redis, keys(), origin);
    const events = [
      {
        type: "toolExecEnd",
        toolCallId: "c1",
        toolName: "t",
        result: { content: [], details: { a: [1, "x"] } },
        isError: false,
      },
      { type: "turnStart", note: undefined },
      { type: "handoff", sessionId: "the event's own", runId: "r0" }, // the origin's fields win
      { type: "custom", ts: 1 }, // so does the publish time
    ] as unknown as AgentEvent[];
    for (const event of events) await publisher.emit(event);
    await publisher.flush();
    const stored = (await storedTexts(sessionId)).map(
      (text) => JSON.parse(text) as Record<string, unknown>,
    );
    expect(stored).toHaveLength(events.length);
    stored.forEach((event, i) => {
      const expected = JSON.parse(
        JSON.stringify({ ...events[i], ...origin, ts: event.ts }),
      ) as Record<string, unknown>;
      expect(event).toEqual({ seq: i + 1, ...expected });
      expect(typeof event.ts).toBe("number");
      expect(event.ts).not.toBe(1);
    });
  });
});
