/**
 * A Redis that dies after running a command and before its reply reaches the process: the
 * command's effects are in the AOF, and ioredis sends the command again once it reconnects.
 * Every command of a run must survive that. The script that opens a run, sent again, finds
 * the run open and says "resume", while the coordinator's copy of the transcript, read before,
 * lacks the input the first execution moved into it: the run used to go on without its input
 * (the model answered an empty conversation). Found by the chaos soak after a Redis
 * `SHUTDOWN NOSAVE`.
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { PRODUCTION_JOB_TIMERS, useReplyCuttingProxy } from "../support/replyCuttingProxy.js";

type WireMessage = { role: string; content?: unknown };

/**
 * The model calls `whereAmI` (a sequential tool: it runs in the coordinator) for an input
 * starting "tool", then repeats the conversation's last user message; with no user message it
 * says so.
 */
function echoLastInput(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as WireMessage[];
  const input = messages.filter((m) => m.role === "user").at(-1);
  const text = typeof input?.content === "string" ? input.content : "";
  if (!text) return { kind: "text", text: "no input in this conversation" };
  const toolCalled = messages.some((m) => m.role === "tool");
  if (text.startsWith("tool") && !toolCalled)
    return { kind: "toolCalls", calls: [{ id: "call-1", name: "whereAmI", arguments: {} }] };
  return { kind: "text", text: `heard: ${text}` };
}

const cluster = useTestCluster({
  coordinators: 0,
  workers: 0,
  model: { respond: echoLastInput },
});
// The production timers: what a request job left active by a lost take waited for.
const proxy = useReplyCuttingProxy(cluster, { coordinator: PRODUCTION_JOB_TIMERS });

/** Sends `input` to a new session and returns its answer's text and its transcript's roles. */
async function runSession(sessionId: string, input: string) {
  const { requestId } = await cluster.client.send(input, { sessionId });
  const response = await cluster.client.waitForResponse(requestId, { timeoutMs: 30_000 });
  const transcript = (await cluster.client.messages(sessionId)) as AgentMessage[];
  const text = response.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  return { text, roles: transcript.map((m) => m.role) };
}

describe("a reply Redis lost after running the command", () => {
  it("opens the run with its input when the script that opened it is sent again", async () => {
    const sessionId = randomUUID();
    // The first command naming the session's run inputs is the one that opens its run.
    proxy.cutAt(`{${sessionId}}:runInputs`, 1);
    const cutsBefore = proxy.cuts();
    const { text, roles } = await runSession(sessionId, "the input");
    expect(proxy.cuts()).toBe(cutsBefore + 1);
    expect(text).toBe("heard: the input");
    expect(roles).toEqual(["user", "assistant"]);
  }, 60_000);

  it("answers each input once, with its own input, whichever command of its run lost its reply", async () => {
    const outcomes: string[] = [];
    for (let nth = 1; nth <= 40; nth++) {
      const sessionId = randomUUID();
      proxy.cutAt(`{${sessionId}}`, nth);
      const cutsBefore = proxy.cuts();
      const { text, roles } = await runSession(sessionId, `tool input ${nth}`);
      const cut = proxy.cuts() > cutsBefore;
      outcomes.push(`${nth}${cut ? "" : " (no cut)"}: ${text} [${roles.join(",")}]`);
      if (!cut) break; // past the run's last command naming the session
    }
    const expected = outcomes.map((line) => {
      const nth = line.split(":")[0]?.split(" ")[0];
      return `${line.split(":")[0]}: heard: tool input ${nth} [user,assistant,toolResult,assistant]`;
    });
    expect(outcomes).toEqual(expected);
    expect(outcomes.at(-1)).toContain("(no cut)");
  }, 240_000);

  it("takes each request at once when the coordinator's take of a request lost its reply", async () => {
    const outcomes: string[] = [];
    for (let nth = 1; nth <= 4; nth++) {
      // The first command naming the coordinator queue's wait list: the take of the request
      // (its only one: the take says no job is left, and the intake blocks on the marker next),
      // or an idle fetch's, which takes nothing, when one comes first.
      proxy.cutAt(":coordinator:wait", 1);
      const cutsBefore = proxy.cuts();
      const sessionId = randomUUID();
      const { requestId } = await cluster.client.send(`request ${nth}`, { sessionId });
      const answer = await cluster.client
        .waitForResponse(requestId, { timeoutMs: 10_000 })
        .then((response) => response.content.map((p) => (p.type === "text" ? p.text : "")).join(""))
        .catch((err: Error) => `no answer: ${err.name}`);
      outcomes.push(`${proxy.cuts() > cutsBefore ? "cut" : "no cut"}: ${answer}`);
    }
    expect(outcomes.map((o) => o.replace(/^(no )?cut: /, ""))).toEqual(
      [1, 2, 3, 4].map((nth) => `heard: request ${nth}`),
    );
    expect(outcomes.filter((o) => o.startsWith("cut")).length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
