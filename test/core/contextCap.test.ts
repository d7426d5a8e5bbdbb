import { type AgentTool, createOpenAILlmCall, YiemAgent } from "@yiem/core";
import {
  type ScriptedModelServer,
  type ScriptedRequest,
  startScriptedModelServer,
} from "@yiem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { makeTool, textResult } from "../support/toolFixtures.js";

let server: ScriptedModelServer | undefined;
let agent: YiemAgent | undefined;

afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
});

async function agentWithCap(maxContextBytes: number): Promise<YiemAgent> {
  server = await startScriptedModelServer({ respond: () => ({ kind: "text", text: "noted" }) });
  const llmCall = createOpenAILlmCall({
    model: "m",
    baseURL: server.baseURL,
    apiKey: "k",
    maxRetries: 0,
  });
  agent = new YiemAgent({ llmCall, limits: { maxContextBytes } });
  return agent;
}

function userTextsSent(index: number): string[] {
  const messages = (server?.requests[index]?.body.messages ?? []) as Array<{
    role: string;
    content: unknown;
  }>;
  return messages.filter((m) => m.role === "user").map((m) => String(m.content).slice(0, 8));
}

describe("the transcript sent to the model has a cap", () => {
  it("leaves the oldest turns out of the request once the transcript is over the cap, keeping them stored", async () => {
    const agent = await agentWithCap(10_000);
    for (const word of ["first", "second", "third"]) {
      agent.run(`${word} ${"x".repeat(4000)}`);
      await agent.takeResponse();
    }
    expect(userTextsSent(0)).toEqual(["first xx"]);
    expect(userTextsSent(1)).toEqual(["first xx", "second x"]);
    expect(userTextsSent(2)).toEqual(["second x", "third xx"]);
    expect(agent.state.messages.filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("ends the run with a clear error, without calling the model, when the latest turn alone is over the cap", async () => {
    const agent = await agentWithCap(10_000);
    agent.run("y".repeat(20_000));
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("error");
    expect(response.errorMessage).toContain("over the 10000-byte context cap");
    expect(server?.requests).toHaveLength(0);
  });
});

/** The scenario: three turns of 64 calls, each with 28 KiB of arguments and of result. */
const TURNS = 3;
const CALLS = 64;
const ITEM = 28 * 1024;

/** Answers with a batch of 64 `echo` calls (ids `t<turn>_<n>`) for three turns, then "done". */
function respondInTurns(request: ScriptedRequest) {
  const turn = request.index + 1;
  if (turn > TURNS) return { kind: "text" as const, text: "done" };
  return {
    kind: "toolCalls" as const,
    calls: Array.from({ length: CALLS }, (_, n) => ({
      id: `t${turn}_${n}`,
      name: "echo",
      arguments: { text: String(n % 10).repeat(ITEM) },
    })),
  };
}

const echo: AgentTool = makeTool("echo", {
  parallelToolExecute: true,
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: (_id, args) => textResult(String(args.text)),
});

interface SentMessage {
  role: string;
  content: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { arguments: string } }>;
}

function sentIn(index: number): SentMessage[] {
  return (server?.requests[index]?.body.messages ?? []) as SentMessage[];
}

/** Whether each call of each assistant message is answered by exactly one tool message right after it. */
function pairsHold(messages: SentMessage[]): boolean {
  return messages.every((message, i) => {
    if (!message.tool_calls) return true;
    const results = messages.slice(i + 1, i + 1 + message.tool_calls.length);
    return message.tool_calls.every((call, n) => results[n]?.tool_call_id === call.id);
  });
}

/** The tool results of turn `turn` in a request: `full`, `placeholder` or `other`, one per call. */
function resultsOfTurn(messages: SentMessage[], turn: number): string[] {
  return messages
    .filter((m) => m.role === "tool" && m.tool_call_id?.startsWith(`t${turn}_`))
    .map((m) => {
      const text = String(m.content);
      if (text.length === ITEM) return "full";
      if (/^\[tool result left out of the context for size: \d+ bytes\]$/.test(text))
        return "placeholder";
      return "other";
    });
}

/** The arguments of turn `turn`'s calls in a request: `full`, `placeholder` or `other`. */
function argumentsOfTurn(messages: SentMessage[], turn: number): string[] {
  const calls = messages.flatMap((m) =>
    (m.tool_calls ?? []).filter((call) => call.id.startsWith(`t${turn}_`)),
  );
  return calls.map((call) => {
    const args = JSON.parse(call.function.arguments) as { text?: string; leftOut?: string };
    if (args.text?.length === ITEM) return "full";
    if (/^\d+ bytes of arguments, left out of the context for size$/.test(args.leftOut ?? ""))
      return "placeholder";
    return "other";
  });
}

const all = (kind: string) => Array.from({ length: CALLS }, () => kind);

describe("the context cap trims inside a run", () => {
  it("completes three turns of 64 × 28 KiB in one run under the 4 MiB cap, leaving out earlier results, then earlier arguments, with placeholders", async () => {
    server = await startScriptedModelServer({ respond: respondInTurns });
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      apiKey: "k",
      maxRetries: 0,
    });
    agent = new YiemAgent({ llmCall, tools: [echo] });
    agent.run("echo a lot");
    const response = await agent.takeResponse();
    expect(response.errorMessage).toBeUndefined();
    expect(response.content).toEqual([{ type: "text", text: "done" }]);
    expect(server.requests).toHaveLength(TURNS + 1);
    for (const request of server.requests) {
      const messages = request.body.messages as SentMessage[];
      expect(Buffer.byteLength(JSON.stringify(messages))).toBeLessThanOrEqual(4 * 1024 * 1024);
      expect(pairsHold(messages)).toBe(true);
      expect(messages.find((m) => m.role === "user")).toEqual({
        role: "user",
        content: "echo a lot",
      });
    }
    // The second request fits as it is; later ones keep only the latest turn whole.
    expect(resultsOfTurn(sentIn(1), 1)).toEqual(all("full"));
    expect(resultsOfTurn(sentIn(2), 1)).toEqual(all("placeholder"));
    expect(argumentsOfTurn(sentIn(2), 1)).toEqual(all("placeholder"));
    expect(argumentsOfTurn(sentIn(2), 2)).toEqual(all("full"));
    expect(resultsOfTurn(sentIn(2), 2)).toEqual(all("full"));
    for (const turn of [1, 2]) {
      expect(resultsOfTurn(sentIn(3), turn)).toEqual(all("placeholder"));
      expect(argumentsOfTurn(sentIn(3), turn)).toEqual(all("placeholder"));
    }
    expect(argumentsOfTurn(sentIn(3), 3)).toEqual(all("full"));
    expect(resultsOfTurn(sentIn(3), 3)).toEqual(all("full"));
    // The transcript keeps every result whole.
    const stored = agent.state.messages.filter((m) => m.role === "toolResult");
    expect(stored).toHaveLength(TURNS * CALLS);
    for (const message of stored)
      expect(message.content).toEqual([
        { type: "text", text: expect.stringMatching(/^\d{28672}$/) },
      ]);
  }, 60_000);

  it("ends the run with the clear error when the latest turn alone (the model's calls and their results) is over the cap", async () => {
    server = await startScriptedModelServer({
      respond: () => ({
        kind: "toolCalls",
        calls: [{ id: "big", name: "echo", arguments: { text: "z".repeat(30_000) } }],
      }),
    });
    const llmCall = createOpenAILlmCall({
      model: "m",
      baseURL: server.baseURL,
      apiKey: "k",
      maxRetries: 0,
    });
    agent = new YiemAgent({ llmCall, tools: [echo], limits: { maxContextBytes: 50_000 } });
    agent.run("go");
    const response = await agent.takeResponse();
    expect(response.stopReason).toBe("error");
    expect(response.errorMessage).toContain("latest turn is over the 50000-byte context cap");
    expect(server.requests).toHaveLength(1);
  });
});
