/**
 * Lost replies in a tree of agents: a parent calls a child agent and a remote tool in one
 * batch, the child calls a remote tool, on one coordinator and one worker that both reach
 * Redis through a proxy. In turn, each command naming the parent's or the child's session
 * (their keys, and their tool jobs, whose ids carry the session) goes through to Redis, which runs it, and the connection is cut before its reply, as a
 * Redis killed between persisting a script and answering it leaves it; ioredis sends the
 * command again. Every time, the child answers once with its own input, the parent gets one
 * result per call and answers once.
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import { useReplyCuttingProxy } from "../support/replyCuttingProxy.js";

type WireMessage = { role: string; content?: unknown };

const textOf = (m: WireMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

/**
 * The lead calls its helper (with input `child of <its input>`) and `echoText` in one batch,
 * then answers with their results; the helper calls `echoText`, then answers `helped <its
 * input>`. Without a user message, either says so.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as WireMessage[];
  const input = textOf(messages.filter((m) => m.role === "user").at(-1));
  if (!input) return { kind: "text", text: "no input in this conversation" };
  const results = messages.filter((m) => m.role === "tool").map(textOf);
  if (request.body.model === "helper-model") {
    if (results.length === 0)
      return { kind: "toolCalls", calls: [{ name: "echoText", arguments: { text: "echo" } }] };
    return { kind: "text", text: `helped ${input}` };
  }
  if (results.length === 0)
    return {
      kind: "toolCalls",
      calls: [
        { name: "agent__helper", arguments: { input: `child of ${input}` } },
        { name: "echoText", arguments: { text: `echo ${input}` } },
      ],
    };
  return { kind: "text", text: `lead: ${results.join(" | ")}` };
}

const cluster = useTestCluster({
  coordinators: 0,
  workers: 0,
  model: { respond },
  env: {
    YIEM_AGENTS: writeAgentsYaml([
      "agents:",
      "  lead:",
      "    instructions: You lead.",
      "    model: lead-model",
      "    tools: [echoText]",
      "    agents: [helper]",
      "  helper:",
      "    instructions: You help.",
      "    description: Helps.",
      "    model: helper-model",
      "    tools: [echoText]",
    ]),
  },
});
const proxy = useReplyCuttingProxy(cluster, { coordinator: {}, worker: {} });

/** Runs one tree and describes it: the lead's answer, its results per call, the children. */
async function runTree(sessionId: string, input: string): Promise<string> {
  const { requestId } = await cluster.client.send(input, { sessionId, agent: "lead" });
  const response = await cluster.client.waitForResponse(requestId, { timeoutMs: 60_000 });
  const answer = response.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  const transcript = (await cluster.client.messages(sessionId)) as AgentMessage[];
  const results = transcript.filter((m) => m.role === "toolResult").length;
  const children = await cluster.client.children(sessionId);
  const childAnswers = await Promise.all(
    children.map(async (child) => {
      const messages = (await cluster.client.messages(child.sessionId)) as AgentMessage[];
      return `${child.status}/${messages.filter((m) => m.role === "assistant").length}`;
    }),
  );
  return `${answer} · ${results} results · children ${childAnswers.join(",")}`;
}

describe("lost replies in a tree of agents", () => {
  it("answers each call once, whichever command of the parent's or the child's run lost its reply", async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (let nth = 1; nth <= 150; nth++) {
      const sessionId = randomUUID();
      proxy.cutAt([sessionId, "helper-"], nth); // session keys and tool jobs alike
      const cutsBefore = proxy.cuts();
      const outcome = await runTree(sessionId, `tree ${nth}`);
      const cut = proxy.cuts() > cutsBefore;
      outcomes.push(`${nth}${cut ? "" : " (no cut)"}: ${outcome}`);
      expected.push(
        `${nth}${cut ? "" : " (no cut)"}: lead: helped child of tree ${nth} | echo tree ${nth} · 2 results · children done/2`,
      );
      if (!cut) break; // past the tree's last command naming its sessions
    }
    expect(outcomes).toEqual(expected);
    expect(outcomes.at(-1)).toContain("(no cut)");
  }, 600_000);
});
