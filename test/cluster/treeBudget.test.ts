/**
 * One tree, one ledger (issue 34, finding 4): a tree of agents with a budget of N model calls
 * makes at most N model calls and starts at most N child runs, at any fan-out. Each node
 * reserves every model call and every child start from its root's ledger, so 32 siblings that
 * start at once cannot jointly exceed what their root had left. Real coordinators, a worker and
 * the scripted model; the requests are sent with plain BullMQ.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Message = { role: string; content: unknown };

/** How many agents each node of the tree calls at once. */
const FAN_OUT = 32;

function firstUserText(messages: Message[]): string {
  return String(messages.find((m) => m.role === "user")?.content ?? "");
}

/** A node that calls `FAN_OUT` agents named `callee` at once, then answers. */
function fansOut(callee: string, messages: Message[]): ScriptedReply {
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: `${callee}s answered` };
  const input = firstUserText(messages);
  const calls = Array.from({ length: FAN_OUT }, () => ({
    name: `agent__${callee}`,
    arguments: { input },
  }));
  return { kind: "toolCalls", calls };
}

async function respond(request: ScriptedRequest): Promise<ScriptedReply> {
  const messages = (request.body.messages ?? []) as Message[];
  const model = String(request.body.model);
  if (model === "root-model") return fansOut("branch", messages);
  if (model === "branch-model") return fansOut("leaf", messages);
  return { kind: "text", text: `leaf: ${firstUserText(messages)}` };
}

const agents = writeAgentsYaml([
  "agents:",
  "  root:",
  "    instructions: You split the work.",
  "    model: root-model",
  "    tools: []",
  "    agents: [branch]",
  "  branch:",
  "    description: Splits a part of the work.",
  "    instructions: You split a part.",
  "    model: branch-model",
  "    tools: []",
  "    agents: [leaf]",
  "  leaf:",
  "    description: Does one piece.",
  "    instructions: You do one piece.",
  "    model: leaf-model",
  "    tools: []",
]);

const cluster = useTestCluster({
  workers: 1,
  coordinators: 2,
  model: { respond },
  env: { YIEM_AGENTS: agents, YIEM_COORDINATOR_CONCURRENCY: "256" },
});
const plain = usePlainCoordinatorQueue(cluster);

/** The model calls of the tree that started with `tag` (every node's input carries it). */
function modelCallsOf(tag: string): number {
  return cluster.model.requests.filter((r) =>
    firstUserText((r.body.messages ?? []) as Message[]).includes(tag),
  ).length;
}

/** Every child run under `sessionId`, at any depth. */
async function descendantsOf(sessionId: string): Promise<string[]> {
  const children = await cluster.client.children(sessionId);
  const below = await Promise.all(children.map((child) => descendantsOf(child.sessionId)));
  return [...children.map((child) => child.sessionId), ...below.flat()];
}

describe("a tree of agents under one budget", () => {
  it.each([
    { maxModelCalls: 5, reaches: "its branches" },
    { maxModelCalls: 40, reaches: "its leaves, three deep" },
  ])(
    "makes at most $maxModelCalls model calls with fan-out 32 ($reaches)",
    async ({ maxModelCalls }) => {
      const tag = `tree-${randomUUID().slice(0, 8)}`;
      const sessionId = randomUUID();
      const job = await plain.queue.add("ask", {
        agent: "root",
        input: tag,
        sessionId,
        budget: { maxModelCalls },
      });
      const result = (await job.waitUntilFinished(plain.events, 90_000)) as {
        response: { stopReason: string; content: Array<{ text?: string }> };
      };
      expect(result.response.stopReason).toBe("budget");
      expect(result.response.content[0]?.text).toMatch(/maxModelCalls/);
      // Children finish after their parent's call got their answers: wait for the last ones.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(modelCallsOf(tag)).toBeLessThanOrEqual(maxModelCalls);
      expect(modelCallsOf(tag)).toBeGreaterThanOrEqual(Math.min(maxModelCalls, 1 + FAN_OUT));
      const descendants = await descendantsOf(sessionId);
      expect(descendants.length).toBeLessThanOrEqual(maxModelCalls);
      if (maxModelCalls > 1 + FAN_OUT) {
        const leaves = descendants.filter((id) => id.startsWith("leaf-"));
        expect(leaves.length).toBeGreaterThan(0); // the ledger reached the third level
      }
    },
  );
});
