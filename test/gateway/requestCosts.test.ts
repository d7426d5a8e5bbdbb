/**
 * Work per request grows with the request, not the cluster (issue 34, finding 11): a gateway
 * on a Redis of this file's own, its commands counted with `INFO commandstats`. Naming a new
 * session costs the same with 10 or 500 requests waiting in the coordinator queue (no look
 * through the backlog); listing sessions reads each listed session's usage summary, not its
 * transcript (one without a summary, from before it was kept, is summed from its transcript);
 * listing a key's approvals reads its trees' indexes, whatever other keys have waiting (a call
 * recorded before the index is listed after one pass of the sweep).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentEndEvent, clusterKeys, type RunUsage, YiemClient } from "@yiem/core";
import { ApprovalStore, SessionStore } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  startGatewayProcess,
  type TestKey,
  writeKeysFile,
} from "./support.js";

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const bob = makeKey("bob", { scopes: ["submit", "read", "approve"] });

let redis: TestRedis;
let connection: Redis;
let gateway: GatewayProcess;
let queue: Queue;

beforeAll(async () => {
  redis = await startTestRedis({ privateServer: true });
  connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const dir = await mkdtemp(join(tmpdir(), "yiem-costs-"));
  const file = join(dir, "keys.jsonl");
  await writeKeysFile(file, [alice, bob]);
  const env = { REDIS_URL: redis.url, YIEM_PREFIX: redis.prefix, YIEM_API_KEYS: file };
  gateway = await startGatewayProcess(env, {}, { compiled: true });
  queue = new Queue("coordinator", { connection, prefix: `${redis.prefix}:bull` });
}, 120_000);

afterAll(async () => {
  await gateway?.process.stop(3000);
  await queue?.close();
  connection?.disconnect();
  await redis?.stop();
});

const keys = () => clusterKeys(redis.prefix);

/** Every command Redis ran (scripts' commands included, `INFO` left out), by name. */
async function commandCounts(): Promise<Map<string, number>> {
  const info = await connection.info("commandstats");
  const counts = new Map<string, number>();
  for (const [, name = "", calls = "0"] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (name !== "info") counts.set(name, Number(calls));
  return counts;
}

/** The commands Redis ran while `work` ran, by name (nothing else talks to this Redis). */
async function commandsOf(work: () => Promise<unknown>): Promise<Map<string, number>> {
  const before = await commandCounts();
  await work();
  const after = await commandCounts();
  const delta = new Map<string, number>();
  for (const [name, calls] of after) {
    const more = calls - (before.get(name) ?? 0);
    if (more > 0) delta.set(name, more);
  }
  return delta;
}

function total(counts: Map<string, number>): number {
  return [...counts.values()].reduce((sum, n) => sum + n, 0);
}

const call = (key: TestKey, method: string, path: string, body?: unknown) =>
  callGateway(gateway.url, key.secret, method, path, body === undefined ? {} : { body });

/** Starts a run of `key` in a new session it names, as a browser would; returns the session. */
async function startRun(key: TestKey, sessionId = `s-${randomUUID()}`): Promise<string> {
  const answer = await call(key, "POST", "/v1/runs", { input: "hello", sessionId });
  expect(answer.status).toBe(202);
  return sessionId;
}

/** Fills the coordinator queue up to `n` waiting requests of other sessions (no coordinator runs). */
async function backlogOf(n: number): Promise<void> {
  const waiting = await queue.getWaitingCount();
  const jobs = Array.from({ length: n - waiting }, () => ({
    name: "request",
    data: { input: "queued", sessionId: `other-${randomUUID()}` },
  }));
  if (jobs.length > 0) await queue.addBulk(jobs);
  expect(await queue.getWaitingCount()).toBe(n);
}

describe("naming a new session", () => {
  it("costs the same Redis commands with 10 or 500 requests waiting in the coordinator queue", async () => {
    await startRun(alice); // the gateway's first request opens what it keeps
    await backlogOf(10);
    const few = await commandsOf(() => startRun(alice));
    await backlogOf(500);
    const many = await commandsOf(() => startRun(alice));
    expect(total(many)).toBe(total(few));
    expect(Object.fromEntries(many)).toEqual(Object.fromEntries(few));
    expect(total(few)).toBeLessThan(100);
  });

  it("finds a session a client sent to before any coordinator took its request in", async () => {
    const client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
    try {
      const { sessionId } = await client.send("queued only");
      expect(await client.hasSession(sessionId)).toBe(true);
      expect(await client.hasSession(`never-${randomUUID()}`)).toBe(false);
      // Another key naming it is told it does not exist for it, and cannot take it over.
      const taken = await call(bob, "POST", "/v1/runs", { input: "mine now", sessionId });
      expect(taken.status).toBe(404);
    } finally {
      await client.close();
    }
  });
});

/** A usage with `modelCalls` model calls and 100 tokens each. */
function usageOf(modelCalls: number): RunUsage {
  return {
    inputTokens: 60 * modelCalls,
    outputTokens: 40 * modelCalls,
    reasoningTokens: 0,
    cachedInputTokens: 0,
    totalTokens: 100 * modelCalls,
    modelCalls,
    toolCalls: 0,
  };
}

/**
 * Gives `sessionId` a transcript of `answers` long answers and closes a run on it as a
 * coordinator does (`finishRun`), storing `summary` as its usage summary unless undefined.
 */
async function runFinishedIn(sessionId: string, answers: number, summary?: RunUsage) {
  const store = new SessionStore(connection, keys());
  const token = randomUUID();
  expect(await store.acquire(sessionId, token, 60_000)).toBe(true);
  const answer = {
    role: "assistant",
    content: [{ type: "text", text: "x".repeat(20_000) }],
    stopReason: "stop",
    model: "m",
    usage: { inputTokens: 60, outputTokens: 40, totalTokens: 100 },
    timestamp: Date.now(),
  };
  await connection.rpush(
    keys().messages(sessionId),
    ...Array.from({ length: answers }, () => JSON.stringify(answer)),
  );
  const event = {
    type: "agentEnd",
    response: answer,
    messages: [],
    usage: usageOf(answers),
  } as unknown as AgentEndEvent;
  const run = { runId: randomUUID(), inputIds: [], event, sessionUsage: summary };
  expect(await store.finishRun(sessionId, token, answer as never, run)).toBe("idle");
  await store.release(sessionId, token);
}

describe("listing sessions", () => {
  it("reads each listed session's usage summary, not its transcript; one from before the summary is summed from its transcript", async () => {
    const bigs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sessionId = await startRun(bob, `big-${randomUUID()}`);
      await runFinishedIn(sessionId, 50, usageOf(50));
      bigs.push(sessionId);
    }
    const listed = await commandsOf(async () => {
      const answer = await call(bob, "GET", "/v1/sessions?limit=3");
      expect(answer.status).toBe(200);
      expect(answer.body.sessions.map((s: { sessionId: string }) => s.sessionId).sort()).toEqual(
        [...bigs].sort(),
      );
      for (const session of answer.body.sessions) expect(session.usage).toEqual(usageOf(50));
    });
    expect(listed.get("lrange")).toBeUndefined(); // 3 MB of transcripts, none read

    const old = await startRun(bob, `old-${randomUUID()}`);
    await runFinishedIn(old, 2); // closed by a coordinator that kept no summary
    const withOld = await commandsOf(async () => {
      const answer = await call(bob, "GET", "/v1/sessions?limit=1");
      expect(answer.body.sessions[0]).toMatchObject({
        sessionId: old,
        usage: { modelCalls: 2, totalTokens: 200 },
      });
    });
    expect(withOld.get("lrange")).toBe(1);
  });
});

/** Records a call awaiting approval in `sessionId` as its coordinator does. */
async function approvalIn(sessionId: string): Promise<string> {
  const store = new SessionStore(connection, keys());
  const approvals = new ApprovalStore(connection, keys());
  const token = randomUUID();
  expect(await store.acquire(sessionId, token, 60_000)).toBe(true);
  const callKey = `call_${randomUUID()}`;
  const recorded = await approvals.request(sessionId, token, {
    callKey,
    toolCallId: callKey,
    toolName: "refund",
    arguments: { amount: 5, note: "y".repeat(2000) },
    reason: "needs approval",
    runId: randomUUID(),
    requestedAt: Date.now(),
  });
  expect(recorded).toBe("new");
  await store.release(sessionId, token);
  return callKey;
}

/** Lists `key`'s approvals through the gateway, with the commands it cost. */
async function listApprovals(key: TestKey) {
  let listed: Array<{ sessionId: string; callKey: string }> = [];
  const commands = await commandsOf(async () => {
    const answer = await call(key, "GET", "/v1/approvals");
    expect(answer.status).toBe(200);
    listed = answer.body.approvals;
  });
  return { listed, commands };
}

describe("listing a key's approvals", () => {
  it("costs what it returns, whatever other keys have waiting; a call recorded before the index is listed after a sweep", async () => {
    const own = await startRun(alice, `own-${randomUUID()}`);
    const callKey = await approvalIn(own);
    const others = await Promise.all(
      Array.from({ length: 5 }, () => startRun(bob, `others-${randomUUID()}`)),
    );
    for (const sessionId of others) await approvalIn(sessionId);
    const few = await listApprovals(alice);
    expect(few.listed.map((a) => [a.sessionId, a.callKey])).toEqual([[own, callKey]]);

    for (let i = 0; i < 40; i++) await approvalIn(others[i % others.length] ?? "");
    const many = await listApprovals(alice);
    expect(many.listed.map((a) => a.callKey)).toEqual([callKey]);
    expect(Object.fromEntries(many.commands)).toEqual(Object.fromEntries(few.commands));

    // A call recorded by a version without the tree's index: listed once the sweep passed.
    const member = `${own} ${callKey}`;
    await connection.zrem(keys().treeApprovals(own), member);
    expect((await listApprovals(alice)).listed).toEqual([]);
    await new ApprovalStore(connection, keys()).dropOrphanEntries(0, Date.now());
    expect((await listApprovals(alice)).listed.map((a) => a.callKey)).toEqual([callKey]);
  });
});
