import { randomUUID } from "node:crypto";
import {
  type AgentMessage,
  clusterKeys,
  connectRedis,
  type RedisClient,
  sumRunUsage,
} from "@yiem/core";
import {
  LeaseLostError,
  NOT_AS_EXPECTED,
  PipelinedTranscript,
  SessionStore,
} from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { finalAnswer, toolResultMessage, userMessage } from "../support/messages.js";

/**
 * A run's results are appended without waiting for the reply, and the run's next write goes
 * right behind them. These scenarios check, on a real Redis, that such a write never lands
 * when the append before it did not.
 */

const LEASE_MS = 60_000;

let server: TestRedis;
let redis: RedisClient;
let store: SessionStore;

beforeAll(async () => {
  server = await startTestRedis();
  redis = connectRedis(server.url);
  store = new SessionStore(redis, clusterKeys(server.prefix));
});

afterAll(async () => {
  await redis.quit();
  await server.stop();
});

/** A held session with an open run, and one more plain input waiting to be drained into it. */
interface OpenSession {
  sessionId: string;
  token: string;
  runId: string;
  /** The transcript as the holder knows it. */
  messages: AgentMessage[];
}

let order = Date.now() * 1024;

async function openSessionWithWaitingInput(): Promise<OpenSession> {
  const sessionId = `s-${randomUUID()}`;
  const token = randomUUID();
  await store.enqueueInput(sessionId, "in-1", "input", userMessage("first"), ++order);
  expect(await store.acquire(sessionId, token, LEASE_MS)).toBe(true);
  const start = await store.startRun(sessionId, token);
  if (start.kind !== "new") throw new Error(`expected a new run, got ${start.kind}`);
  await store.enqueueInput(sessionId, "in-2", "input", userMessage("second"), ++order);
  return { sessionId, token, runId: start.runId, messages: [start.message] };
}

function textsOf(messages: AgentMessage[]): string[] {
  return messages.map((m) =>
    m.role === "user"
      ? m.content.map((block) => (block.type === "text" ? block.text : "")).join("")
      : m.role === "toolResult"
        ? `result ${m.toolCallId}`
        : m.role,
  );
}

describe("a run's transcript with pipelined result appends", () => {
  let s: OpenSession;
  beforeEach(async () => {
    s = await openSessionWithWaitingInput();
  });

  /** The run's transcript writes, counting the holder's transcript (plus `miscount`). */
  function transcriptOf(miscount = 0): PipelinedTranscript {
    return new PipelinedTranscript(s.sessionId, () => s.messages.length + miscount);
  }

  /** Sends the results of calls `ids` without waiting (with `token`, the holder's unless given). */
  function appendResults(transcript: PipelinedTranscript, ids: string[], token = s.token): void {
    const results = ids.map(toolResultMessage);
    transcript.appendBehind((expect) => store.appendMany(s.sessionId, token, results, expect));
    s.messages.push(...results);
  }

  /** Drains the waiting input, right behind whatever append is pending. */
  function drain(transcript: PipelinedTranscript) {
    return transcript.write((expect) => store.drainInputs(s.sessionId, s.token, expect));
  }

  async function storedTexts(): Promise<string[]> {
    return textsOf(await store.loadMessages(s.sessionId));
  }

  it("drains the waiting input right behind the appended results, in order", async () => {
    const transcript = transcriptOf();
    appendResults(transcript, ["c1", "c2"]);
    const drained = await drain(transcript);
    expect(drained.inputIds).toEqual(["in-2"]);
    expect(await storedTexts()).toEqual(["first", "result c1", "result c2", "second"]);
  });

  it("moves no input behind an append that did not land, and throws what the append failed with", async () => {
    const transcript = transcriptOf();
    // The append is fenced off (a stale token): it writes nothing, as any failed append.
    appendResults(transcript, ["c1"], "stale-token");
    await expect(drain(transcript)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await storedTexts()).toEqual(["first"]);
    // The input still waits: the next drain (once the results are in) takes it.
    expect(await store.appendMany(s.sessionId, s.token, [toolResultMessage("c1")])).toBe(true);
    const later = await store.drainInputs(s.sessionId, s.token);
    expect(later).not.toBe(NOT_AS_EXPECTED);
    expect(later && later !== NOT_AS_EXPECTED ? later.inputIds : []).toEqual(["in-2"]);
  });

  it("does not close the run behind an append that did not land", async () => {
    const transcript = transcriptOf();
    appendResults(transcript, ["c1"], "stale-token");
    const response = finalAnswer();
    const run = {
      runId: s.runId,
      inputIds: ["in-1"],
      event: { type: "agentEnd" as const, response, usage: sumRunUsage([]) },
    };
    const finish = transcript.write((expect) =>
      store.finishRun(s.sessionId, s.token, response, run, expect),
    );
    await expect(finish).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.readResponse(s.sessionId, "in-1")).toBeUndefined();
    const resumed = await store.startRun(s.sessionId, s.token);
    expect(resumed.kind).toBe("resume");
  });

  it("keeps two appends in order when the second goes out before the first is answered", async () => {
    const transcript = transcriptOf();
    appendResults(transcript, ["c1", "c2"]);
    appendResults(transcript, ["c3"]);
    await transcript.settle();
    expect(await storedTexts()).toEqual(["first", "result c1", "result c2", "result c3"]);
  });

  it("writes again without the guard when the run miscounted its transcript but the append landed", async () => {
    const transcript = transcriptOf(5);
    appendResults(transcript, ["c1"]);
    const drained = await drain(transcript);
    expect(drained.inputIds).toEqual(["in-2"]);
    expect(await storedTexts()).toEqual(["first", "result c1", "second"]);
  });

  it("writes a batch's results once when the same append arrives again (a client's resend after a lost reply)", async () => {
    const results = [toolResultMessage("c1"), toolResultMessage("c2")];
    expect(await store.appendMany(s.sessionId, s.token, results)).toBe(true);
    expect(await store.appendMany(s.sessionId, s.token, results)).toBe(true);
    expect(await store.appendMany(s.sessionId, s.token, results, 1)).toBe(true);
    expect(await storedTexts()).toEqual(["first", "result c1", "result c2"]);
    await store.appendMany(s.sessionId, s.token, [toolResultMessage("c3")]);
    expect(await storedTexts()).toEqual(["first", "result c1", "result c2", "result c3"]);
  });

  it("refuses a guarded write whose expected length is not the transcript's, changing nothing", async () => {
    expect(await store.drainInputs(s.sessionId, s.token, 7)).toBe(NOT_AS_EXPECTED);
    expect(await store.append(s.sessionId, s.token, toolResultMessage("c9"), 0)).toBe(
      NOT_AS_EXPECTED,
    );
    expect(await store.appendMany(s.sessionId, s.token, [toolResultMessage("c9")], 3)).toBe(
      NOT_AS_EXPECTED,
    );
    expect(await storedTexts()).toEqual(["first"]);
    expect(await store.drainInputs(s.sessionId, s.token, 1)).toMatchObject({ inputIds: ["in-2"] });
  });
});

describe("an append given the transcript's length as the run knows it", () => {
  let s: OpenSession;
  beforeEach(async () => {
    s = await openSessionWithWaitingInput();
  });

  /** Reads of the transcript Redis has run so far (`INFO commandstats`), scripts' included. */
  async function transcriptReads(): Promise<number> {
    const info = await redis.info("commandstats");
    const calls = (name: string) =>
      Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return calls("lrange") + calls("llen") + calls("lindex");
  }

  async function storedTexts(): Promise<string[]> {
    return textsOf(await store.loadMessages(s.sessionId));
  }

  /** The same store with replica acknowledgements: its appends go by their own scripts. */
  const acknowledged = () =>
    new SessionStore(redis, clusterKeys(server.prefix), { replicas: 1, timeoutMs: 1 });

  it("pushes at once, reading nothing of the transcript, alone or in the session's batch", async () => {
    const before = await transcriptReads();
    const results = [toolResultMessage("c1"), toolResultMessage("c2")];
    expect(await store.appendMany(s.sessionId, s.token, results, undefined, 1)).toBe(true);
    expect(
      await acknowledged().appendMany(
        s.sessionId,
        s.token,
        [toolResultMessage("c3")],
        undefined,
        3,
      ),
    ).toBe(true);
    expect(
      await acknowledged().append(s.sessionId, s.token, toolResultMessage("c4"), undefined, 4),
    ).toBe(true);
    expect((await transcriptReads()) - before).toBe(0);
    expect(await storedTexts()).toEqual([
      "first",
      "result c1",
      "result c2",
      "result c3",
      "result c4",
    ]);
  });

  it("does what it did without it when the length is not the transcript's: a resend is written once, a miscount appends, a guard refuses", async () => {
    const results = [toolResultMessage("c1"), toolResultMessage("c2")];
    expect(await store.appendMany(s.sessionId, s.token, results, undefined, 1)).toBe(true);
    expect(await store.appendMany(s.sessionId, s.token, results, undefined, 1)).toBe(true); // resent
    const single = toolResultMessage("c3");
    expect(await acknowledged().append(s.sessionId, s.token, single, undefined, 3)).toBe(true);
    expect(await acknowledged().append(s.sessionId, s.token, single, undefined, 3)).toBe(true); // resent
    expect(
      await store.appendMany(s.sessionId, s.token, [toolResultMessage("c4")], undefined, 9),
    ).toBe(true);
    expect(await store.appendMany(s.sessionId, s.token, [toolResultMessage("c5")], 2, 2)).toBe(
      NOT_AS_EXPECTED,
    );
    expect(await acknowledged().append(s.sessionId, s.token, toolResultMessage("c5"), 2, 2)).toBe(
      NOT_AS_EXPECTED,
    );
    expect(
      await store.appendMany(s.sessionId, "stale-token", [toolResultMessage("c5")], undefined, 5),
    ).toBe(false);
    expect(await storedTexts()).toEqual([
      "first",
      "result c1",
      "result c2",
      "result c3",
      "result c4",
    ]);
  });
});

describe("closing a run", () => {
  async function finish(s: OpenSession, inputIds: string[]) {
    const response = finalAnswer();
    const event = { type: "agentEnd" as const, response, usage: sumRunUsage([]) };
    return store.finishRun(s.sessionId, s.token, response, { runId: s.runId, inputIds, event });
  }

  it("releases the lease in the step that closes the run when nothing waits", async () => {
    const s = await openSessionWithWaitingInput();
    expect(await store.drainInputs(s.sessionId, s.token)).toMatchObject({ inputIds: ["in-2"] });
    expect(await finish(s, ["in-1", "in-2"])).toBe("idle");
    expect(await store.readResponse(s.sessionId, "in-2")).toMatchObject({ role: "assistant" });
    expect(await store.acquire(s.sessionId, "next-holder", LEASE_MS)).toBe(true);
    expect((await store.startRun(s.sessionId, "next-holder")).kind).toBe("idle");
  });

  it("keeps the lease when an input waits, for the holder to open its run next", async () => {
    const s = await openSessionWithWaitingInput();
    expect(await finish(s, ["in-1"])).toBe("closed");
    expect(await store.acquire(s.sessionId, "next-holder", LEASE_MS)).toBe(false);
    expect(await store.startRun(s.sessionId, s.token)).toMatchObject({
      kind: "new",
      runId: "in-2",
    });
  });
});

describe("opening a run", () => {
  it("takes in the plain inputs waiting behind the opening one, as its first drain would", async () => {
    const sessionId = `s-${randomUUID()}`;
    const token = randomUUID();
    await store.enqueueInput(sessionId, "in-1", "input", userMessage("first"), ++order);
    await store.enqueueInput(sessionId, "in-2", "input", userMessage("second"), ++order);
    await store.enqueueInput(sessionId, "f-1", "followUp", userMessage("a follow-up"), ++order);
    expect(await store.acquire(sessionId, token, LEASE_MS)).toBe(true);
    const start = await store.startRun(sessionId, token);
    expect(start).toMatchObject({ kind: "new", runId: "in-1", joined: { inputIds: ["in-2"] } });
    if (start.kind !== "new") return;
    expect(textsOf(start.joined.messages)).toEqual(["second"]);
    expect(textsOf(await store.loadMessages(sessionId))).toEqual(["first", "second"]);
    // Nothing is left for a drain; the follow-up waits for a run of its own.
    expect(await store.drainInputs(sessionId, token, 2, start.order)).toEqual({
      inputIds: [],
      messages: [],
    });
  });

  it("waits for a request sent before the opening input, and drops one given up", async () => {
    const sessionId = `s-${randomUUID()}`;
    const token = randomUUID();
    const sent = Date.now() * 1024;
    await store.enqueueInput(sessionId, "in-1", "input", userMessage("first"), sent + 1);
    const submitted = clusterKeys(server.prefix).submitted(sessionId);
    await redis.zadd(submitted, sent - 10_000 * 1024, "given-up", sent, "on-its-way");
    expect(await store.acquire(sessionId, token, LEASE_MS)).toBe(true);
    expect((await store.startRun(sessionId, token)).kind).toBe("settling");
    expect(await redis.zrange(submitted, 0, -1)).toEqual(["on-its-way"]);
    await redis.zrem(submitted, "on-its-way"); // recorded, or given up in turn
    expect(await store.startRun(sessionId, token)).toMatchObject({ kind: "new", runId: "in-1" });
  });

  it("opens a run with every waiting input in one pop, reading none of those behind the first, and puts them all back when it does not open", async () => {
    const sessionId = `s-${randomUUID()}`;
    const token = randomUUID();
    const keys = clusterKeys(server.prefix);
    const sent = Date.now() * 1024;
    for (const [i, text] of ["first", "second", "third"].entries())
      await store.enqueueInput(sessionId, `in-${i + 1}`, "input", userMessage(text), sent + i + 1);
    await redis.zadd(keys.submitted(sessionId), sent, "on-its-way");
    expect(await store.acquire(sessionId, token, LEASE_MS)).toBe(true);
    const waiting = () => redis.zrange(keys.pendingInputs(sessionId), 0, -1, "WITHSCORES");
    const before = await waiting();
    expect((await store.startRun(sessionId, token)).kind).toBe("settling");
    expect(await waiting()).toEqual(before); // put back as they were
    await redis.zrem(keys.submitted(sessionId), "on-its-way");
    const reads = async () => {
      const info = await redis.info("commandstats");
      return Number(/cmdstat_zrangebyscore:calls=(\d+)/.exec(info)?.[1] ?? 0);
    };
    const readsBefore = await reads();
    const opened = await store.startRun(sessionId, token);
    expect(opened).toMatchObject({ kind: "new", runId: "in-1" });
    expect(opened.kind === "new" ? opened.joined.inputIds : []).toEqual(["in-2", "in-3"]);
    // One range read (of the requests on their way), none of the inputs behind the first.
    expect((await reads()) - readsBefore).toBe(1);
    expect(await waiting()).toEqual([]);
    expect(textsOf(await store.loadMessages(sessionId))).toEqual(["first", "second", "third"]);
  });

  it("leaves the inputs behind a run that opens aborted waiting", async () => {
    const sessionId = `s-${randomUUID()}`;
    const token = randomUUID();
    const keys = clusterKeys(server.prefix);
    await store.enqueueInput(sessionId, "in-1", "input", userMessage("first"), ++order);
    await store.enqueueInput(sessionId, "in-2", "input", userMessage("second"), ++order);
    await redis.set(keys.abortOnStart(sessionId), "1");
    expect(await store.acquire(sessionId, token, LEASE_MS)).toBe(true);
    expect(await store.startRun(sessionId, token)).toMatchObject({
      kind: "new",
      runId: "in-1",
      aborted: true,
    });
    expect(await redis.zrange(keys.pendingInputs(sessionId), 0, -1)).toEqual(["in-2"]);
  });

  it("takes in nothing behind an opening follow-up", async () => {
    const sessionId = `s-${randomUUID()}`;
    const token = randomUUID();
    await store.enqueueInput(sessionId, "f-1", "followUp", userMessage("a follow-up"), ++order);
    expect(await store.acquire(sessionId, token, LEASE_MS)).toBe(true);
    const start = await store.startRun(sessionId, token);
    expect(start).toMatchObject({ kind: "new", runId: "f-1", joined: { inputIds: [] } });
  });
});
