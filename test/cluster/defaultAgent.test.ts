/**
 * A request naming no agent never surprises (issue 30): a coordinator whose agents file
 * defines one agent answers it with that agent; one that defines two, none named `default`,
 * refuses it at intake, at once and never retried, with a reason naming the agents to choose
 * from, and no model call is made or counted. A session whose agent the coordinator does not
 * serve (its agents file changed since the session started) is refused the same way instead of
 * ending in an error that counts a model call nobody made. Real coordinator processes, a
 * private Redis, plain BullMQ clients.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterKeys } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  openPlainCoordinatorQueue,
  type PlainCoordinatorQueue,
  usePlainCoordinatorQueue,
} from "../support/plainCoordinatorQueue.js";

type Message = { role: string; content: unknown };

/** Answers with the model's name and the last user input: "solo-model: hi". */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Message[];
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  return { kind: "text", text: `${request.body.model}: ${input}` };
}

/** Writes an agents file with these agents (each with a model named `<agent>-model`). */
function agentsFile(names: string[]): string {
  const lines = ["agents:"];
  for (const name of names)
    lines.push(`  ${name}:`, `    instructions: You are ${name}.`, `    model: ${name}-model`);
  const path = join(mkdtempSync(join(tmpdir(), "yiem-default-agent-")), "agents.yaml");
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** What a job ended with: its return value or its failure, and how often it was tried. */
interface Settled {
  result?: {
    agent: string;
    response: { stopReason: string; content: unknown[] };
    usage: { modelCalls: number };
  };
  failedReason?: string;
  attemptsMade: number;
}

/** Adds a request with plain BullMQ (3 attempts, so a retry would show) and waits for its end. */
async function ask(plain: PlainCoordinatorQueue, data: Record<string, unknown>): Promise<Settled> {
  const job = await plain.queue.add("ask", data, { attempts: 3 });
  const result = await job.waitUntilFinished(plain.events, 20_000).catch(() => undefined);
  const done = await plain.queue.getJob(job.id ?? "");
  return { result, failedReason: done?.failedReason, attemptsMade: done?.attemptsMade ?? -1 };
}

// The cluster's coordinator serves two agents, none named `default`.
const cluster = useTestCluster(() =>
  Promise.resolve({
    workers: 0,
    model: { respond },
    env: { YIEM_AGENTS: agentsFile(["support", "billing"]) },
  }),
);
const two = usePlainCoordinatorQueue(cluster);

// A second coordinator, on a prefix of its own, serves one agent: `solo`.
let one: PlainCoordinatorQueue;
let soloPrefix: string;
beforeAll(async () => {
  soloPrefix = `${cluster.redis.prefix}-solo`;
  await cluster.addCoordinatorWith({ YIEM_PREFIX: soloPrefix, YIEM_AGENTS: agentsFile(["solo"]) });
  one = await openPlainCoordinatorQueue(cluster.redis.url, soloPrefix);
}, 60_000);
afterAll(async () => one?.close());

describe("a request naming no agent", () => {
  it("is answered by the only agent of a coordinator that defines one", async () => {
    const before = cluster.model.requests.length;
    const { result, failedReason } = await ask(one, { input: "hi" });
    expect(failedReason).toBeUndefined();
    expect(result?.agent).toBe("solo");
    expect(result?.response.stopReason).toBe("stop");
    expect(result?.response.content).toEqual([{ type: "text", text: "solo-model: hi" }]);
    expect(result?.usage.modelCalls).toBe(1);
    expect(cluster.model.requests.length - before).toBe(1);
  });

  it("is refused at intake, once, naming the agents, where two are defined and none is default", async () => {
    const before = cluster.model.requests.length;
    const refused = await ask(two, { input: "hi" });
    expect(refused.result).toBeUndefined();
    expect(refused.failedReason).toBe(
      'invalid request: agent: a new session needs an agent: none is named, and no agent is named "default" (known: billing, support)',
    );
    expect(refused.attemptsMade).toBe(1);
    expect(cluster.model.requests.length).toBe(before); // no model call made

    const named = await ask(two, { input: "hi", agent: "billing" });
    expect(named.result?.response.content).toEqual([{ type: "text", text: "billing-model: hi" }]);
  });

  it("continues its session's agent where several are defined", async () => {
    const first = await ask(two, { input: "hi", agent: "support" });
    const sessionId = (first.result as unknown as { sessionId: string }).sessionId;
    const next = await ask(two, { input: "again", sessionId });
    expect(next.result?.agent).toBe("support");
    expect(next.result?.response.content).toEqual([{ type: "text", text: "support-model: again" }]);
  });

  it("is refused at intake for a session whose agent this coordinator does not serve, counting no model call", async () => {
    const redis = new Redis(cluster.redis.url);
    try {
      // A session an earlier agents file started, as agent "ghost".
      await redis.set(clusterKeys(soloPrefix).sessionAgent("s-ghost"), "ghost", "EX", 3600);
    } finally {
      redis.disconnect();
    }
    const before = cluster.model.requests.length;
    const refused = await ask(one, { input: "hi", sessionId: "s-ghost" });
    expect(refused.result).toBeUndefined();
    expect(refused.failedReason).toBe(
      `invalid request: agent: session s-ghost belongs to agent "ghost", which this coordinator does not serve (known: solo; the coordinators' YIEM_AGENTS differ?)`,
    );
    expect(refused.attemptsMade).toBe(1);
    expect(cluster.model.requests.length).toBe(before);
  });
});
