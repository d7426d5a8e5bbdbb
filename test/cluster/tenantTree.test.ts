/**
 * A tree of agents spends its tenant's budget per day (issue 33, item 3): every child run is
 * its root's tenant's, so the whole tree reserves each model call and child start from the
 * tenant's ledger of the day, and never makes more model calls than its budget. Real
 * coordinator processes and the scripted model.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";

type Message = { role: string; content: unknown };

function firstUserText(messages: Message[]): string {
  return String(messages.find((m) => m.role === "user")?.content ?? "");
}

/** `root` calls four `leaf` agents at once; each `leaf` calls one `twig`; a `twig` answers. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Message[];
  const input = firstUserText(messages);
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "answered" };
  if (request.body.model === "root-model") {
    const calls = Array.from({ length: 4 }, () => ({ name: "agent__leaf", arguments: { input } }));
    return { kind: "toolCalls", calls };
  }
  if (request.body.model === "leaf-model")
    return { kind: "toolCalls", calls: [{ name: "agent__twig", arguments: { input } }] };
  return { kind: "text", text: `twig: ${input}` };
}

const agents = writeAgentsYaml([
  "agents:",
  "  root:",
  "    instructions: You split the work.",
  "    model: root-model",
  "    tools: []",
  "    agents: [leaf]",
  "  leaf:",
  "    description: Does a part, with a twig.",
  "    instructions: You do a part.",
  "    model: leaf-model",
  "    tools: []",
  "    agents: [twig]",
  "  twig:",
  "    description: Does one piece.",
  "    instructions: You do one piece.",
  "    model: twig-model",
  "    tools: []",
]);

/** The tree's tenant may make 6 model calls a day; unlimited, the tree makes 14. */
const TENANTS = { tree: { budgetPerDay: { maxModelCalls: 6 } } };

const cluster = useTestCluster({
  workers: 0,
  coordinators: 1,
  model: { respond },
  env: { YIEM_AGENTS: agents, YIEM_TENANTS: JSON.stringify(TENANTS) },
});

/** The model calls of the tree that started with `tag` (every node's input carries it). */
function modelCallsOf(tag: string): number {
  return cluster.model.requests.filter((r) =>
    firstUserText((r.body.messages ?? []) as Message[]).includes(tag),
  ).length;
}

describe("a tree of agents under its tenant's budget per day", () => {
  it("spends it from every node, children included, and stops at it", async () => {
    const free = `free-${randomUUID()}`;
    const unlimited = await cluster.client.send(free, { agent: "root", tenant: "other" });
    await cluster.client.waitForAnswer(unlimited.runId, { timeoutMs: 30_000 });
    expect(modelCallsOf(free)).toBe(14); // 2 of the root, 2 of each leaf, 1 of each twig

    const tag = `tree-${randomUUID()}`;
    const { runId } = await cluster.client.send(tag, { agent: "root", tenant: "tree" });
    const { response } = await cluster.client.waitForAnswer(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("budget");
    expect(response.errorMessage).toContain("a day for tenant tree");
    expect(modelCallsOf(tag)).toBe(6); // the children's calls counted: they are the tree's tenant's
  });
});
