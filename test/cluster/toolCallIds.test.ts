/**
 * Models do not always send unique tool-call ids (some number calls per message). Every
 * call must still be dispatched, answered with its own result, and never hang the run.
 */
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import type {
  ScriptedReply,
  ScriptedRequest,
  ScriptedToolCall,
} from "../support/scriptedModelServer.js";

type Wire = { role: string; content: unknown };

const sleep = (id: string, label: string, ms = 10): ScriptedToolCall => ({
  id,
  name: "sleepFor",
  arguments: { ms, label },
});

/** The tool calls each scenario makes per turn; once they are used up, it answers with the results. */
const SCENARIOS: Record<string, ScriptedToolCall[][]> = {
  "reuse an id across turns": [[sleep("call_0", "first")], [sleep("call_0", "second")]],
  "repeat an id in one message": [[sleep("dup", "a"), sleep("dup", "b")]],
  "ids that sanitise alike": [[sleep("c:1", "colon"), sleep("c/1", "slash")]],
  "twelve at once": [Array.from({ length: 12 }, (_, i) => sleep(`n${i}`, `n${i}`, 300))],
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

const cluster = useTestCluster({ workers: 2, model: { respond } });

async function ask(text: string): Promise<string> {
  const { runId } = await cluster.client.send(text);
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
  return response.content.map((block) => ("text" in block ? block.text : "")).join("");
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

  it("waits on twelve parallel remote calls with one abort listener (no listener warning)", async () => {
    const answer = await ask("twelve at once");
    expect(answer.split(" | ")).toEqual(Array.from({ length: 12 }, (_, i) => `n${i} done`));
    const output = cluster.coordinators.flatMap((c) => c.lines).join("\n");
    expect(output).not.toContain("MaxListenersExceededWarning");
  });
});
