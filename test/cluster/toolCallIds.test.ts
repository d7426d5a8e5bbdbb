/**
 * Models do not always send unique tool-call ids (some number calls per message). Every
 * call must still be dispatched, answered with its own result, and never hang the run.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest, ScriptedToolCall } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { createLedger, type Ledger } from "../support/faults.js";

type Wire = { role: string; content: unknown };

const sleep = (id: string, label: string, ms = 10): ScriptedToolCall => ({
  id,
  name: "sleepFor",
  arguments: { ms, label },
});

/** A call of a ledger tool (each execution is counted outside Redis, by label). */
const ledger = (id: string, label: string, name = "ledgerRemote"): ScriptedToolCall => ({
  id,
  name,
  arguments: { label, ms: 10 },
});

/** The tool calls each scenario makes per turn; once they are used up, it answers with the results. */
const SCENARIOS: Record<string, ScriptedToolCall[][]> = {
  "reuse an id across turns": [[sleep("call_0", "first")], [sleep("call_0", "second")]],
  "repeat an id in one message": [[sleep("dup", "a"), sleep("dup", "b")]],
  "ids that sanitise alike": [[sleep("c:1", "colon"), sleep("c/1", "slash")]],
  "twelve at once": [Array.from({ length: 12 }, (_, i) => sleep(`n${i}`, `n${i}`, 300))],
  "an id like a repeat's key, then the repeats": [
    [ledger("c#1", "k1")],
    [ledger("c", "k2"), ledger("c", "k3")],
  ],
  "an id like a repeat's key, then an approved repeat": [
    [ledger("c#1", "p1")],
    [ledger("c", "p2"), ledger("c", "p3", "ledgerApproval")],
  ],
  "two repeats and an id like a key in one message": [
    [ledger("c", "m1"), ledger("c", "m2"), ledger("c#1", "m3")],
  ],
};

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const text = String(messages[lastUser]?.content ?? "");
  const since = messages.slice(lastUser + 1);
  const turn = since.filter((m) => m.role === "assistant").length;
  const next = SCENARIOS[text]?.[turn];
  if (next) return { kind: "toolCalls", calls: next };
  const results = since.filter((m) => m.role === "tool").map((m) => String(m.content));
  return { kind: "text", text: results.join(" | ") };
}

let executions: Ledger;

const cluster = useTestCluster(async () => {
  executions = await createLedger();
  return { workers: 2, model: { respond }, env: { YIEM_TEST_LEDGER: executions.path } };
});

async function ask(text: string, sessionId = randomUUID()): Promise<string> {
  const { runId } = await cluster.client.send(text, { sessionId });
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
  return response.content.map((block) => ("text" in block ? block.text : "")).join("");
}

/** How many times each of `labels` ran, by the ledger. */
async function runsOf(labels: string[]): Promise<number[]> {
  const entries = await executions.entries();
  return labels.map((label) => entries.filter((e) => e.label === label).length);
}

/** The session's tool results as `[toolCallId, text]`, in transcript order. */
async function resultsOf(sessionId: string): Promise<Array<[string, string]>> {
  return (await cluster.client.messages(sessionId)).flatMap(
    (m): Array<[string, string]> =>
      m.role === "toolResult"
        ? [[m.toolCallId, m.content.map((b) => ("text" in b ? b.text : "")).join("")]]
        : [],
  );
}

/** Approves the session's one call awaiting approval as soon as it waits. */
async function approveWhenAsked(sessionId: string): Promise<void> {
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    const [pending] = await cluster.client.pendingApprovals(sessionId);
    if (pending) {
      await cluster.client.approve(sessionId, pending.callKey, { by: "test" });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no call of session ${sessionId} came to await approval`);
}

describe("tool-call ids a model repeats", () => {
  it("dispatches a call whose id was used in an earlier turn, and answers it with its own result", async () => {
    expect(await ask("reuse an id across turns")).toBe("first done | second done");
  });

  it("answers two calls with the same id in one message, each with its own result", async () => {
    expect(await ask("repeat an id in one message")).toBe("a done | b done");
  });

  it("keeps apart call ids that become equal once made safe for job ids (c:1 and c/1)", async () => {
    expect(await ask("ids that sanitise alike")).toBe("colon done | slash done");
  });

  it("runs a repeated id's call whose derived key an earlier call's id already was (c#1, then c twice)", async () => {
    const sessionId = randomUUID();
    const text = "an id like a repeat's key, then the repeats";
    expect(await ask(text, sessionId)).toBe("k1 recorded | k2 recorded | k3 recorded");
    expect(await runsOf(["k1", "k2", "k3"])).toEqual([1, 1, 1]);
    expect(await resultsOf(sessionId)).toEqual([
      ["c#1", "k1 recorded"],
      ["c", "k2 recorded"],
      ["c", "k3 recorded"],
    ]);
  });

  it("runs an approved call whose derived key an earlier call's id already was, not the earlier call's result", async () => {
    const sessionId = randomUUID();
    const text = "an id like a repeat's key, then an approved repeat";
    const [answer] = await Promise.all([ask(text, sessionId), approveWhenAsked(sessionId)]);
    expect(answer).toBe("p1 recorded | p2 recorded | p3 recorded");
    expect(await runsOf(["p1", "p2", "p3"])).toEqual([1, 1, 1]);
  });

  it("answers ids c, c, c#1 in one message, each call run once, in call order (the run used to hang)", async () => {
    const sessionId = randomUUID();
    const text = "two repeats and an id like a key in one message";
    expect(await ask(text, sessionId)).toBe("m1 recorded | m2 recorded | m3 recorded");
    expect(await runsOf(["m1", "m2", "m3"])).toEqual([1, 1, 1]);
    expect(await resultsOf(sessionId)).toEqual([
      ["c", "m1 recorded"],
      ["c", "m2 recorded"],
      ["c#1", "m3 recorded"],
    ]);
    expect(await ask("repeat an id in one message")).toBe("a done | b done"); // the run slot is free
  });

  it("waits on twelve parallel remote calls with one abort listener (no listener warning)", async () => {
    const answer = await ask("twelve at once");
    expect(answer.split(" | ")).toEqual(Array.from({ length: 12 }, (_, i) => `n${i} done`));
    const output = cluster.coordinators.flatMap((c) => c.lines).join("\n");
    expect(output).not.toContain("MaxListenersExceededWarning");
  });
});
