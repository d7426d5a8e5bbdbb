/**
 * What a request's run waits for, on a real Redis behind a proxy that holds every reply 40 ms
 * (so the commands Redis receives within a few ms of one another went out in one round trip,
 * and each round trip the coordinator waits for shows as a 40 ms gap in `MONITOR`'s times).
 * Before its model call: the input's record and the take of the session's lease go out
 * together, and so do the hold's reads of the session (agent, transcript, running marks), the
 * script that opens the run and the features' reads of its limits (the session's input budgets
 * and tenant), which read the run as opened (five round trips before, two now); a request's own
 * budget still lowers its run's. After it: the final answer is appended by the script that
 * closes the run, its `messageEnd` and `turnEnd` stored there ahead of `agentEnd` (one round
 * trip, where the append went one before the close).
 */
import {
  type CoordinatorHandle,
  clusterKeys,
  connectRedis,
  createOpenAILlmCall,
  type RedisClient,
  readEventsAfter,
  startCoordinator,
  ToolStore,
  YiemClient,
} from "@yiem/core";
import { type ScriptedRequest, startScriptedModelServer, startTestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPlainCoordinatorQueue } from "../support/openPlainCoordinatorQueue.js";
import { type MonitoredCommand, startRawMonitor } from "../support/rawMonitor.js";
import { type SlowRepliesProxy, startSlowRepliesProxy } from "../support/slowRepliesProxy.js";

const REPLY_DELAY_MS = 40;

let redis: Awaited<ReturnType<typeof startTestRedis>>;
let proxy: SlowRepliesProxy;
let model: Awaited<ReturnType<typeof startScriptedModelServer>>;
let coordinator: CoordinatorHandle;
let client: YiemClient;
let redisRaw: RedisClient;
const modelRequests: Array<{ at: number; request: ScriptedRequest }> = [];

beforeAll(async () => {
  redis = await startTestRedis({ privateServer: true });
  proxy = await startSlowRepliesProxy(redis.url, REPLY_DELAY_MS);
  model = await startScriptedModelServer({
    respond: (request) => {
      modelRequests.push({ at: Date.now(), request });
      return { kind: "text", text: "done" };
    },
  });
  coordinator = await startCoordinator({
    redis: proxy.url,
    prefix: redis.prefix,
    llmCall: createOpenAILlmCall({ model: "scripted-model", baseURL: model.baseURL, apiKey: "k" }),
    toolStore: new ToolStore({ name: "runOpeningRoundTrips" }),
  });
  client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
  redisRaw = connectRedis(redis.url);
}, 60_000);

afterAll(async () => {
  await client?.close();
  redisRaw?.disconnect();
  await coordinator?.close(1000);
  await proxy?.close();
  await model?.close();
  await redis?.stop();
});

type Seen = MonitoredCommand;

/** What a command is, for the assertions: a script by its first key's kind, else its name. */
function nameOf(args: string[], sessionId: string): string {
  const [name = "", , , firstKey = "", secondKey = ""] = args;
  const session = `:s:{${sessionId}}:`;
  const kind = (key: string) => (key.includes(session) ? key.split(session)[1] : key);
  if (name.toLowerCase() === "evalsha") return `script(${kind(firstKey)},${kind(secondKey)})`;
  return `${name.toLowerCase()} ${kind(args[1] ?? "")}`;
}

/** The commands in `seen` split where `gapMs` or more passed between two of them. */
function roundTrips(seen: Seen[], gapMs: number): Seen[][] {
  const trips: Seen[][] = [];
  for (const command of seen) {
    const last = trips.at(-1);
    const previous = last?.at(-1);
    if (last && previous && command.at - previous.at < gapMs) last.push(command);
    else trips.push([command]);
  }
  return trips;
}

describe("a run's opening", () => {
  it("records the input with the lease's take, and opens the run with its reads, in two round trips", async () => {
    // A first run loads the scripts (each one's first call is sent again, with its text).
    const first = await client.send("warm up");
    await client.waitForResponse(first.requestId, { timeoutMs: 30_000 });
    const sessionId = `opening-${Date.now()}`;
    const monitor = await startRawMonitor(redis.url);
    const sent = await client.send("hello", { sessionId, budget: { maxModelCalls: 1 } });
    const answer = await client.waitForResponse(sent.requestId, { timeoutMs: 30_000 });
    monitor.stop();
    const { seen } = monitor;
    expect(answer.content).toEqual([{ type: "text", text: "done" }]);

    const modelAt = modelRequests.at(-1)?.at ?? 0;
    // The coordinator's commands on the session's keys (its connections go through the proxy).
    const ofSession = seen.filter(
      (command) =>
        proxy.isOwn(command.source) &&
        command.at <= modelAt &&
        command.args.some((arg) => arg.includes(`{${sessionId}}`)),
    );
    const recordAt = ofSession.findIndex(
      (command) => nameOf(command.args, sessionId) === "script(inputs,pendingInputs)",
    );
    expect(recordAt).toBeGreaterThanOrEqual(0);
    // From the input's record to the run's first events (sent beside its model call).
    const opening = ofSession
      .slice(recordAt)
      .filter((command) => !nameOf(command.args, sessionId).startsWith("script(events,"));
    const trips = roundTrips(opening, REPLY_DELAY_MS / 2).map((trip) =>
      trip.map((command) => nameOf(command.args, sessionId)),
    );
    // (Then the run's budget reserves its model call from its tree's ledger: a request's budget.)
    expect(trips.slice(0, 2)).toEqual([
      ["script(inputs,pendingInputs)", "set lease"],
      [
        "get agent",
        "lrange messages",
        "hkeys running",
        "script(lease,run)",
        "hgetall inputBudgets",
        "getex tenant",
      ],
    ]);
  });

  it("appends the final answer in the round trip that closes the run, its events before agentEnd", async () => {
    const sessionId = `close-${Date.now()}`;
    const monitor = await startRawMonitor(redis.url);
    const sent = await client.send("hello", { sessionId });
    await client.waitForResponse(sent.requestId, { timeoutMs: 30_000 });
    monitor.stop();
    const modelAt = modelRequests.at(-1)?.at ?? 0;
    // The coordinator's commands on the session's keys after the model call, to the close.
    const after = monitor.seen.filter(
      (command) =>
        proxy.isOwn(command.source) &&
        command.at > modelAt &&
        command.args.some((arg) => arg.includes(`{${sessionId}}`)),
    );
    const trips = roundTrips(after, REPLY_DELAY_MS / 2).map((trip) =>
      trip.map((command) => nameOf(command.args, sessionId)),
    );
    // `finishRun` (its keys: lease, run, …) goes in the first round trip after the model call
    // (beside the answer's streamed text, a live event, when it is still queued), and no
    // `sessionWrites` (its keys: events, lease, …), the script of a separate append, goes at all.
    expect(trips.findIndex((trip) => trip.includes("script(lease,run)"))).toBe(0);
    expect(trips.flat()).not.toContain("script(events,lease)");
    const keys = clusterKeys(redis.prefix);
    const messages = await redisRaw.lrange(keys.messages(sessionId), 0, -1);
    expect(messages.map((m) => JSON.parse(m).role)).toEqual(["user", "assistant"]);
    const events = await readEventsAfter(redisRaw, keys, sessionId, 0);
    expect(events.slice(-3).map((event) => event.type)).toEqual([
      "messageEnd",
      "turnEnd",
      "agentEnd",
    ]);
  });

  it("completes the request job in the round trip that closes the run, its answer stored first", async () => {
    const sessionId = `complete-${Date.now()}`;
    const monitor = await startRawMonitor(redis.url);
    const sent = await client.send("hello", { sessionId });
    await client.waitForResponse(sent.requestId, { timeoutMs: 30_000 });
    const keys = clusterKeys(redis.prefix);
    const queueKey = `${keys.bullPrefix}:${keys.coordinatorQueue}:`;
    for (
      let i = 0;
      i < 50 && (await redisRaw.zscore(`${queueKey}completed`, sent.requestId)) === null;
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 20));
    monitor.stop();
    const modelAt = modelRequests.at(-1)?.at ?? 0;
    const closeOrComplete = (command: Seen) =>
      command.args[3]?.includes(`{${sessionId}}:lease`) ||
      (command.args[3] === `${queueKey}active` && command.args.includes(sent.requestId));
    const after = monitor.seen.filter(
      (command) =>
        proxy.isOwn(command.source) &&
        command.at > modelAt &&
        command.args[0]?.toLowerCase() === "evalsha" &&
        closeOrComplete(command),
    );
    const trips = roundTrips(after, REPLY_DELAY_MS / 2).map((trip) =>
      trip.map((command) => (command.args[3]?.endsWith(":lease") ? "close" : "complete")),
    );
    // Sent right behind the close, before its reply: one round trip for both, the close first.
    expect(trips).toEqual([["close", "complete"]]);
    expect(await redisRaw.zscore(`${queueKey}completed`, sent.requestId)).not.toBeNull();
  });

  it("lowers the run's budget by its request's own, read behind the opening", async () => {
    const calls = modelRequests.length;
    const sent = await client.send("hello", { budget: { maxModelCalls: 0 } });
    const answer = await client.waitForResponse(sent.requestId, { timeoutMs: 30_000 });
    expect(answer.stopReason).toBe("budget");
    expect(modelRequests.length).toBe(calls);
  });
});

describe("a request that names no session", () => {
  type Answer = { sessionId: string; response: { content: unknown } };

  /** The sessions that have an agent now (`sessionAgent` keys). */
  async function sessionsWithAgents(): Promise<Set<string>> {
    const keys = clusterKeys(redis.prefix);
    const [before, after] = keys.sessionAgent("\u0000").split("\u0000");
    const found = await redisRaw.keys(keys.sessionAgent("*"));
    return new Set(
      found.map((key) => key.slice(before?.length, -(after?.length ?? 0) || undefined)),
    );
  }

  it("claims its new session in its take, then its agent, input, lease and run in one round trip", async () => {
    const plain = await openPlainCoordinatorQueue(redis.url, redis.prefix);
    try {
      const monitor = await startRawMonitor(redis.url);
      const job = await plain.queue.add("ask", { input: "hello" });
      const answer = (await job.waitUntilFinished(plain.events, 30_000)) as Answer;
      monitor.stop();
      expect(answer.response.content).toEqual([{ type: "text", text: "done" }]);
      const { sessionId } = answer;
      const claims = monitor.seen.filter(
        (command) =>
          proxy.isOwn(command.source) &&
          (command.args.includes("yiemSessionId") ||
            nameOf(command.args, sessionId) === "set agent"),
      );
      const trips = roundTrips(claims, REPLY_DELAY_MS / 2).map((trip) =>
        trip.map((command) => (command.args[0]?.toLowerCase() === "set" ? "agent" : "take")),
      );
      // The take names the field of the job's session; the agent's claim waits for its reply.
      expect(trips).toEqual([["take"], ["agent"]]);
      expect(await client.sessionAgent(sessionId)).toBe("default");
      // Then the session's commands up to the model call: a new session has nothing to read,
      // and its agent is the one just claimed, so its run opens in the round trip that claims
      // that agent, records its input and takes its lease.
      const modelAt = modelRequests.at(-1)?.at ?? 0;
      const opening = monitor.seen.filter(
        (command) =>
          proxy.isOwn(command.source) &&
          command.at <= modelAt &&
          command.args.some((arg) => arg.includes(`{${sessionId}}`)) &&
          !nameOf(command.args, sessionId).startsWith("script(events,"),
      );
      const openingTrips = roundTrips(opening, REPLY_DELAY_MS / 2).map((trip) =>
        trip.map((command) => nameOf(command.args, sessionId)),
      );
      expect(openingTrips).toEqual([
        [
          "set agent",
          "script(inputs,pendingInputs)",
          "set lease",
          "script(lease,run)",
          "hgetall inputBudgets",
          "getex tenant",
        ],
      ]);
    } finally {
      await plain.close();
    }
  });

  it("takes the agent's claim back when the job had a session already", async () => {
    const plain = await openPlainCoordinatorQueue(redis.url, redis.prefix);
    try {
      const before = await sessionsWithAgents();
      // A job whose first intake recorded its session (as one delivered again finds it).
      const job = await plain.queue.add("ask", { input: "hello" }, { delay: 300 });
      const recorded = `recorded-${Date.now()}`;
      await plain.connection.hset(
        `${clusterKeys(redis.prefix).bullPrefix}:coordinator:${job.id}`,
        "yiemSessionId",
        recorded,
      );
      const answer = (await job.waitUntilFinished(plain.events, 30_000)) as Answer;
      expect(answer.sessionId).toBe(recorded);
      let added: string[] = [];
      for (let i = 0; i < 50; i++) {
        added = [...(await sessionsWithAgents())].filter((id) => !before.has(id));
        if (added.length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Only the job's own session has an agent: the claim of the session proposed is gone.
      expect(added).toEqual([recorded]);
    } finally {
      await plain.close();
    }
  });
});
