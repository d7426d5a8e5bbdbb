/**
 * Faults in a tree of agents: a parent calls two child agents (each running a remote tool) and
 * one plain tool in one batch, on two coordinator processes; a coordinator is SIGKILLed while a
 * child runs, while the parent is parked, and just after a child answered. Each time every
 * tool of the tree runs once, each child answers once, and the parent gets exactly one result
 * per call and answers once.
 */
import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import {
  leaseHolderPid,
  recordFigure,
  useLedgerCluster,
  waitUntilSessionUnheld,
} from "../support/faults.js";

type Message = { role: string; content: unknown };

/** How long each child's remote tool runs: long enough to kill a coordinator meanwhile. */
const CHILD_TOOL_MS = 2500;

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Message[];
  const model = String(request.body.model);
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  const last = messages.at(-1);
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  const results = messages.slice(lastAssistant + 1).map((m) => String(m.content));
  if (last?.role === "tool") return { kind: "text", text: `${model}: ${results.join(" | ")}` };
  if (model === "lead-model")
    return {
      kind: "toolCalls",
      calls: [
        { name: "agent__researcher", arguments: { input: `r-${input}` } },
        { name: "agent__writer", arguments: { input: `w-${input}` } },
        { name: "ledgerRemote", arguments: { label: `lead-${input}`, ms: 100 } },
      ],
    };
  return {
    kind: "toolCalls",
    calls: [{ name: "ledgerRemote", arguments: { label: input, ms: CHILD_TOOL_MS } }],
  };
}

function agentsFile(): string {
  const child = (name: string) => [
    `  ${name}:`,
    `    instructions: You are the ${name}.`,
    `    model: ${name}-model`,
    "    tools: [ledgerRemote]",
  ];
  return writeAgentsYaml([
    "agents:",
    "  lead:",
    "    instructions: You lead.",
    "    model: lead-model",
    "    tools: [ledgerRemote]",
    "    agents: [researcher, writer]",
    ...child("researcher"),
    ...child("writer"),
  ]);
}

const { cluster, ledger } = useLedgerCluster({
  workers: 1,
  coordinators: 2,
  model: { respond },
  env: { YIEM_AGENTS: agentsFile() },
});

/** The pid of the coordinator holding `sessionId` now (polled until one does). */
async function holderOf(sessionId: string): Promise<number> {
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    const pid = await leaseHolderPid(cluster.redisTarget, cluster.redis.prefix, sessionId);
    if (pid !== undefined) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no coordinator holds ${sessionId}`);
}

/** When the last SIGKILL of the scenario running was sent. */
let killedAt = 0;

/** SIGKILLs the coordinator process `pid` and starts a replacement. */
async function killCoordinator(pid: number): Promise<void> {
  const victim = cluster.coordinators.find((c) => c.pid === pid);
  if (!victim) throw new Error(`no coordinator has pid ${pid}`);
  victim.signal("SIGKILL");
  killedAt = Date.now();
  await victim.exited;
  await cluster.addCoordinator();
}

/** The session of the child running `agent` under `rootSessionId`, once it is listed. */
async function childSession(rootSessionId: string, agent: string): Promise<string> {
  for (const until = Date.now() + 15_000; Date.now() < until; ) {
    const child = (await cluster.client.children(rootSessionId)).find((c) => c.agent === agent);
    if (child) return child.sessionId;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${agent} child under ${rootSessionId}`);
}

/** Resolves with the first event of `sessionId` that `when` matches. */
async function firstEvent(sessionId: string, when: (e: BusEvent) => boolean): Promise<BusEvent> {
  for await (const event of cluster.client.events(sessionId, { fromStart: true }))
    if (when(event)) return event;
  throw new Error("events ended");
}

/**
 * Runs the tree for `tag`, with `crash` run beside it; checks the tree's guarantees and records
 * the scenario's figures for docs/RELIABILITY.md.
 */
async function runTreeWith(
  scenario: string,
  tag: string,
  crash: (rootSessionId: string) => Promise<void>,
) {
  const sessionId = randomUUID();
  const { runId } = await cluster.client.send(tag, { sessionId, agent: "lead" });
  await crash(sessionId);
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 60_000 });
  const recoveryMs = Date.now() - killedAt;
  const text = (response.content[0] as { text: string }).text;
  expect(text).toBe(
    `lead-model: researcher-model: r-${tag} recorded | writer-model: w-${tag} recorded | lead-${tag} recorded`,
  );
  // Every tool of the tree ran once.
  const runs = (await ledger.entries()).filter((e) => e.label.endsWith(tag));
  expect(runs.map((e) => e.label).sort()).toEqual([`lead-${tag}`, `r-${tag}`, `w-${tag}`]);
  // The parent got one result per call, and answered once.
  const messages = await cluster.client.messages(sessionId);
  const results = messages.filter((m) => m.role === "toolResult");
  expect(results).toHaveLength(3);
  expect(messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  // Each child answered once.
  const children = await cluster.client.children(sessionId);
  expect(children.map((c) => c.status)).toEqual(["done", "done"]);
  for (const child of children) {
    const childMessages = await cluster.client.messages(child.sessionId);
    expect(childMessages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
  }
  await recordFigure({
    scenario: `tree of agents: coordinator SIGKILLed ${scenario}`,
    runs: 3,
    calls: 5,
    lost: 0,
    duplicated: runs.length - new Set(runs.map((e) => e.label)).size,
    recoveryMs,
    note: "a parent, two child agents and one plain tool in one batch; each child runs a remote tool: every tool ran once, each child answered once, the parent got one result per call",
  });
}

describe("faults: a coordinator is SIGKILLed in a tree of agents", () => {
  it("while a child runs its tool", async () => {
    await runTreeWith("while a child runs", `a${randomUUID().slice(0, 6)}`, async (root) => {
      const child = await childSession(root, "researcher");
      await firstEvent(child, (e) => e.type === "toolExecStart");
      await killCoordinator(await holderOf(child));
    });
  });

  it("while the parent is parked", async () => {
    await runTreeWith(
      "while the parent is parked",
      `b${randomUUID().slice(0, 6)}`,
      async (root) => {
        await firstEvent(root, (e) => e.type === "toolExecStart");
        const parentHolder = await holderOf(root);
        const child = await childSession(root, "writer");
        await firstEvent(child, (e) => e.type === "toolExecStart");
        // Parked: the parent's lease is let go while its children run.
        await waitUntilSessionUnheld(cluster.redisTarget, cluster.redis.prefix, root);
        await killCoordinator(parentHolder);
      },
    );
  });

  it("just after a child answered", async () => {
    await runTreeWith(
      "just after a child answered",
      `c${randomUUID().slice(0, 6)}`,
      async (root) => {
        const child = await childSession(root, "researcher");
        await firstEvent(child, (e) => e.type === "toolExecStart");
        const childHolder = await holderOf(child);
        await firstEvent(child, (e) => e.type === "agentEnd");
        await killCoordinator(childHolder);
      },
    );
  });
});
