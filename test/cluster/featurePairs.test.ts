/**
 * Run features where they meet: approvals, child runs (agents calling agents), handoffs,
 * budgets, aborts and follow-ups, taken two at a time, through the public interfaces only
 * (the client, the agents file, the scripted model, real coordinator and worker processes).
 * Each row of the table is one pair: it starts a run, drives it (approve, abort, follow up),
 * and checks the answer, the usage, the ledger of tool runs and what the client lists.
 */
import { randomUUID } from "node:crypto";
import type { YiemClient } from "@yiem/core/client";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { type Ledger, useLedgerCluster } from "../support/faults.js";

type Message = { role: string; content: unknown };

function lastUserText(messages: Message[]): string {
  return String(messages.findLast((m) => m.role === "user")?.content ?? "");
}

/** The text of the tool results after the model's last message, in order. */
function toolTexts(messages: Message[]): string {
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  return messages
    .slice(lastAssistant + 1)
    .map((m) => String(m.content))
    .join(" | ");
}

/** Whether the model's own call was answered last (a handoff's transfer result is not its own). */
function answeredLast(messages: Message[]): boolean {
  const last = messages.at(-1);
  return last?.role === "tool" && !String(last.content).startsWith("transferred to");
}

/** A model that calls `call` once, then answers with what the call gave it. */
function callsOnce(name: string, call: { name: string; arguments: Record<string, unknown> }) {
  return (messages: Message[]): ScriptedReply =>
    answeredLast(messages)
      ? { kind: "text", text: `${name} got: ${toolTexts(messages)}` }
      : { kind: "toolCalls", calls: [call] };
}

/** Each agent's model, by model name: what it answers to the transcript it is sent. */
const MODELS: Record<string, (messages: Message[]) => ScriptedReply> = {
  // approvals × child runs: the boss's child runs a call that needs approval.
  "boss-model": (m) =>
    callsOnce("boss", { name: "agent__helper", arguments: { input: lastUserText(m) } })(m),
  "helper-model": (m) =>
    callsOnce("helper", { name: "ledgerApproval", arguments: { label: lastUserText(m) } })(m),
  // handoffs × child runs: the child hands off, and its target answers the parent's call.
  "chief-model": (m) =>
    callsOnce("chief", { name: "agent__triage", arguments: { input: lastUserText(m) } })(m),
  "triage-model": () => ({
    kind: "toolCalls",
    calls: [{ name: "transfer_to_expert", arguments: {} }],
  }),
  "expert-model": (m) => ({ kind: "text", text: `expert: ${lastUserText(m)}` }),
  // budgets × handoffs and × child runs: agents that never stop calling tools.
  "front-model": () => ({
    kind: "toolCalls",
    calls: [{ name: "transfer_to_looper", arguments: {} }],
  }),
  "looper-model": (m) => ({
    kind: "toolCalls",
    calls: [{ name: "ledgerRemote", arguments: { label: `loop-${m.length}`, ms: 1 } }],
  }),
  "parent-model": (m) =>
    m.at(-1)?.role === "tool"
      ? { kind: "text", text: `parent got: ${toolTexts(m)}` }
      : { kind: "toolCalls", calls: [{ name: "agent__looper", arguments: { input: "go" } }] },
  // approvals × handoffs: the target's call needs approval.
  "desk-model": () => ({
    kind: "toolCalls",
    calls: [{ name: "transfer_to_cashier", arguments: {} }],
  }),
  "cashier-model": (m) =>
    callsOnce("cashier", { name: "ledgerApproval", arguments: { label: lastUserText(m) } })(m),
  // aborts × handoffs: the target waits until it is aborted.
  "porter-model": () => ({
    kind: "toolCalls",
    calls: [{ name: "transfer_to_sleeper", arguments: {} }],
  }),
  "sleeper-model": (m) =>
    answeredLast(m)
      ? { kind: "text", text: "sleeper woke" }
      : {
          kind: "toolCalls",
          calls: [{ name: "waitForAbort", arguments: { label: lastUserText(m) } }],
        },
  // follow-ups × approvals and × handoffs.
  "gate-model": (m) =>
    lastUserText(m).startsWith("follow")
      ? { kind: "text", text: `gate answered ${lastUserText(m)}` }
      : callsOnce("gate", { name: "ledgerApproval", arguments: { label: lastUserText(m) } })(m),
  "reception-model": () => ({
    kind: "toolCalls",
    calls: [{ name: "transfer_to_clinic", arguments: {} }],
  }),
  "clinic-model": (m) => ({ kind: "text", text: `clinic: ${lastUserText(m)}` }),
};

async function respond(request: ScriptedRequest): Promise<ScriptedReply> {
  const model = String(request.body.model);
  const messages = (request.body.messages ?? []) as Message[];
  const reply = MODELS[model];
  return reply ? reply(messages) : { kind: "text", text: `${model}: unknown` };
}

function agentsFile(): string {
  const agent = (name: string, extra: string[] = []) => [
    `  ${name}:`,
    `    description: The ${name}.`,
    `    instructions: You are the ${name}.`,
    `    model: ${name}-model`,
    ...extra.map((line) => `    ${line}`),
  ];
  return writeAgentsYaml([
    "agents:",
    ...agent("boss", ["tools: []", "agents: [helper]"]),
    ...agent("helper", ["tools: [ledgerApproval]"]),
    ...agent("chief", ["tools: []", "agents: [triage]"]),
    ...agent("triage", ["tools: []", "handoffs: [expert]"]),
    ...agent("expert", ["tools: []"]),
    ...agent("front", ["tools: []", "handoffs: [looper]"]),
    ...agent("looper", ["tools: [ledgerRemote]"]),
    ...agent("parent", ["tools: []", "agents: [looper]"]),
    ...agent("desk", ["tools: []", "handoffs: [cashier]"]),
    ...agent("cashier", ["tools: [ledgerApproval]"]),
    ...agent("porter", ["tools: []", "handoffs: [sleeper]"]),
    ...agent("sleeper", ["tools: [waitForAbort]"]),
    ...agent("gate", ["tools: [ledgerApproval]"]),
    ...agent("reception", ["tools: []", "handoffs: [clinic]"]),
    ...agent("clinic", ["tools: []"]),
  ]);
}

const { cluster, ledger } = useLedgerCluster({
  workers: 1,
  coordinators: 2,
  model: { respond },
  env: { YIEM_AGENTS: agentsFile() },
});

/** Waits until `sessionId`'s tree has a call awaiting approval, and returns it. */
async function pendingIn(client: YiemClient, sessionId: string) {
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    const [pending] = await client.pendingApprovals(sessionId);
    if (pending) return pending;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no call of session ${sessionId}'s tree awaits approval`);
}

/** The text of an answer. */
function textOf(response: { content: Array<{ type: string; text?: string }> }): string {
  return response.content.map((block) => block.text ?? "").join("");
}

/** How many times the ledger recorded a call whose label starts with `label`. */
async function runsOf(ledgerOf: Ledger, label: string): Promise<number> {
  const entries = await ledgerOf.entries();
  return entries.filter((entry) => String(entry.label).startsWith(label)).length;
}

interface PairScenario {
  pair: string;
  drive: (client: YiemClient, tag: string) => Promise<void>;
}

const PAIRS: PairScenario[] = [
  {
    pair: "approval in a child run: listed and approved through the root's session",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "boss" });
      const pending = await pendingIn(client, sessionId);
      expect(pending.toolName).toBe("ledgerApproval");
      expect(pending.sessionId).not.toBe(sessionId); // it waits in the child's session
      expect(pending.chain?.[0]?.sessionId).toBe(sessionId);
      await client.approve(pending.sessionId, pending.callKey, { by: "owner" });
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      expect(textOf(answer.response)).toBe(`boss got: helper got: ${tag} recorded`);
      expect(await runsOf(ledger, tag)).toBe(1);
      const [child] = await client.children(sessionId);
      expect(child).toMatchObject({ agent: "helper", status: "done" });
    },
  },
  {
    pair: "handoff inside a child run: the target answers the parent's call",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "chief" });
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      expect(textOf(answer.response)).toBe(`chief got: expert: ${tag}`);
      const [child] = await client.children(sessionId);
      expect(child).toMatchObject({ agent: "triage", status: "done" });
      expect(await client.sessionAgent(child?.sessionId ?? "")).toBe("expert");
      expect(await client.sessionAgent(sessionId)).toBe("chief");
    },
  },
  {
    pair: "budget across a handoff: the request's budget holds for the target",
    async drive(client, tag) {
      const budget = { maxModelCalls: 3 };
      const { runId } = await client.send(tag, { agent: "front", budget });
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      expect(answer.response.stopReason).toBe("budget");
      expect(answer.usage?.modelCalls).toBe(3); // front once, the looper twice
    },
  },
  {
    pair: "budget across child runs: a child gets what its parent has left",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, {
        agent: "parent",
        budget: { maxModelCalls: 3 },
      });
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      const [child] = await client.children(sessionId);
      expect(child).toMatchObject({ agent: "looper", status: "budget" });
      expect(child?.usage?.modelCalls).toBe(2); // the parent's first call left two
      expect(answer.usage?.modelCalls).toBeLessThanOrEqual(3);
      expect(answer.response.stopReason).toBe("budget");
    },
  },
  {
    pair: "abort during an approval in a child run: the child's call is denied, nothing runs",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "boss" });
      await pendingIn(client, sessionId);
      expect((await client.abort(sessionId)).kind).toBe("recorded");
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      expect(answer.response.stopReason).toBe("aborted");
      expect(await client.pendingApprovals(sessionId)).toEqual([]);
      expect(await runsOf(ledger, tag)).toBe(0);
    },
  },
  {
    pair: "abort after a handoff: the target's running call sees the abort",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "porter" });
      // The sleeper's call runs on a worker once its progress (`{ waiting: true }`) comes.
      for await (const event of client.events(sessionId, { fromStart: true }))
        if (event.type === "toolExecUpdate") break;
      await client.abort(sessionId);
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      expect(answer.response.stopReason).toBe("aborted");
      expect(answer.agent).toBe("sleeper");
      expect(await runsOf(ledger, tag)).toBe(1); // the worker's call saw the abort ("aborted <label>")
    },
  },
  {
    pair: "approval after a handoff: the target's call parks and runs once approved",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "desk" });
      const pending = await pendingIn(client, sessionId);
      expect(pending.sessionId).toBe(sessionId);
      await client.approve(sessionId, pending.callKey);
      const answer = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      expect(textOf(answer.response)).toBe(`cashier got: ${tag} recorded`);
      expect(answer.agent).toBe("cashier");
      expect(await runsOf(ledger, tag)).toBe(1);
    },
  },
  {
    pair: "follow-up while parked: it waits, and is answered after the approved run",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "gate" });
      const pending = await pendingIn(client, sessionId);
      const later = await client.send(`follow ${tag}`, { sessionId, followUp: true });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await client.pendingApprovals(sessionId)).toHaveLength(1); // still parked
      await client.approve(sessionId, pending.callKey);
      const first = await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      const second = await client.waitForAnswer(later.runId, { timeoutMs: 30_000 });
      expect(textOf(first.response)).toBe(`gate got: ${tag} recorded`);
      expect(textOf(second.response)).toBe(`gate answered follow ${tag}`);
      expect(await runsOf(ledger, tag)).toBe(1);
    },
  },
  {
    pair: "follow-up after a handoff, naming no agent: the session's current agent answers",
    async drive(client, tag) {
      const { sessionId, runId } = await client.send(tag, { agent: "reception" });
      await client.waitForAnswer(runId, { timeoutMs: 30_000 });
      const later = await client.send(`again ${tag}`, { sessionId });
      const answer = await client.waitForAnswer(later.runId, { timeoutMs: 30_000 });
      expect(textOf(answer.response)).toBe(`clinic: again ${tag}`);
      expect(answer.agent).toBe("clinic");
    },
  },
];

describe("run features, two at a time", () => {
  it.each(PAIRS)("$pair", async ({ drive }) => {
    await drive(cluster.client, `pair-${randomUUID().slice(0, 8)}`);
  });
});
