/**
 * A `beforeToolCall` hook may require approval for one call: the call waits, its run holds
 * nothing on the coordinator meanwhile, and it runs once approved.
 */
import { randomUUID } from "node:crypto";
import type { AgentTool } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";

type Wire = { role: string; content: unknown };

/** Asks `note` to write the user's text, then answers `final: <result>`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  if (messages.at(-1)?.role === "tool")
    return { kind: "text", text: `final: ${String(messages.at(-1)?.content)}` };
  const text = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  return { kind: "toolCalls", calls: [{ id: "h-1", name: "note", arguments: { text } }] };
}

const runs: string[] = [];
const note: AgentTool = {
  name: "note",
  label: "Note",
  description: "Writes a note",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: (_id, args) => {
    runs.push(String(args.text));
    return { content: [{ type: "text", text: `noted ${String(args.text)}` }], details: {} };
  },
};

const local = useInProcessCoordinator({
  respond,
  tools: [note],
  storeName: "hook-test",
  coordinator: {
    toolExecution: "sequential",
    beforeToolCall: ({ args }) =>
      String(args.text).startsWith("ask")
        ? { requireApproval: { reason: "asks the boss" } }
        : undefined,
  },
});

describe("approval required by a beforeToolCall hook", () => {
  it("holds the one call the hook names, parks the run without a held session, and runs it once approved", async () => {
    const plain = await local.client.send("write this down");
    expect((await local.client.waitForResponse(plain.runId)).content).toEqual([
      { type: "text", text: "final: noted write this down" },
    ]);

    const sessionId = randomUUID();
    const requested = (async () => {
      for await (const event of local.client.events(sessionId, { fromStart: true }))
        if (event.type === "toolApprovalRequested") return event;
      return undefined;
    })();
    const { runId } = await local.client.send("ask the boss", { sessionId });
    expect(await requested).toMatchObject({ toolName: "note", reason: "asks the boss" });
    for (let i = 0; i < 100 && local.coordinator.heldSessions() > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(local.coordinator.heldSessions()).toBe(0);
    expect(runs).toEqual(["write this down"]);
    expect(await local.client.pendingApprovals(sessionId)).toMatchObject([
      { sessionId, callKey: "h-1", toolName: "note", reason: "asks the boss" },
    ]);

    await local.client.approve(sessionId, "h-1", { by: "boss" });
    expect((await local.client.waitForResponse(runId)).content).toEqual([
      { type: "text", text: "final: noted ask the boss" },
    ]);
    expect(runs).toEqual(["write this down", "ask the boss"]);
  });
});
