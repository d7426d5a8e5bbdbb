import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** Turn 1: writeTool("addNumbers"); turn 2: two parallel addNumbers calls plus a probe for secrets; turn 3: report. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
  if (results.length === 0) {
    return {
      kind: "toolCalls",
      calls: [
        {
          id: "w1",
          name: "writeTool",
          arguments: {
            name: "addNumbers",
            label: "Add Numbers",
            description: "Adds a and b",
            inputSchema: {
              type: "object",
              properties: { a: { type: "number" }, b: { type: "number" } },
              required: ["a", "b"],
            },
            executeCode:
              "return { content: [{ type: 'text', text: String(args.a + args.b) }], details: {} };",
            parallel: true,
          },
        },
      ],
    };
  }
  if (results.length === 1) {
    return {
      kind: "toolCalls",
      calls: [
        { id: "a1", name: "addNumbers", arguments: { a: 2, b: 3 } },
        { id: "a2", name: "addNumbers", arguments: { a: 40, b: 2 } },
        { id: "l1", name: "listTools", arguments: {} },
      ],
    };
  }
  return { kind: "text", text: results.join(" || ") };
}

const cluster = useTestCluster({
  workers: 2,
  model: { respond },
  env: { YIEM_ALLOW_WRITE_TOOL: "1", YIEM_CANARY_SECRET: "canary-4f2a" },
});

describe("lifecycle §15 writeTool on the cluster", () => {
  it("writes a tool that every worker then runs in its sandbox, without a restart", async () => {
    const { sessionId, runId } = await cluster.client.send("make me an adder");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    const [written, five, fortyTwo, list] = text.split(" || ");
    expect(written).toMatch(/^Tool "addNumbers" saved as version 1/);
    expect([five, fortyTwo]).toEqual(["5", "42"]);
    expect(list).toContain("- addNumbers: Add Numbers — Adds a and b");
    const transcript = await cluster.client.messages(sessionId);
    const writeResult = transcript.find((m) => m.role === "toolResult" && m.toolCallId === "w1");
    expect(writeResult?.role === "toolResult" && writeResult.addedToolNames).toEqual([
      "addNumbers",
    ]);
    expect(JSON.stringify(transcript)).not.toContain("canary-4f2a");
  });
});
