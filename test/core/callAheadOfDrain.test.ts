/**
 * A turn's model call sent while its drain is on its way (`AgentLoopDeps.callAheadOfDrain`,
 * what a coordinator does while the drain goes to Redis): the loop runs against the scripted
 * model server over HTTP (the `openai` SDK), with a drain that answers late. The call is kept
 * when nothing came in; when input came in it is dropped, none of its text announced, and the
 * model is asked again with the input.
 */
import {
  type AgentEvent,
  type AgentState,
  createOpenAILlmCall,
  defineTool,
  formatMsgForLLM,
  prepareContext,
  runAgentLoop,
  type UserMessage,
} from "@yiem/core";
import { type ScriptedModelServer, startScriptedModelServer } from "@yiem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { userMessage } from "../support/messages.js";

const DRAIN_MS = 150;

let model: ScriptedModelServer | undefined;

afterEach(async () => {
  await model?.close();
  model = undefined;
});

function stateWithTool(): AgentState {
  const noop = defineTool({
    name: "noop",
    description: "does nothing",
    parameters: z.object({}),
    execute: () => ({ content: [{ type: "text", text: "ok" }] }),
  });
  return {
    systemPrompt: "test",
    tools: new Map([["noop", noop]]),
    messages: [],
    pendingToolCalls: new Set(),
    activeRun: false,
  };
}

/** The texts of the user messages of a request the model got. */
function userTextsOf(body: { messages?: unknown[] }): string[] {
  return (body.messages ?? []).flatMap((message) => {
    const { role, content } = message as { role: string; content: unknown };
    return role === "user" && typeof content === "string" ? [content] : [];
  });
}

/**
 * Runs "hello" to its answer: the model asks for `noop` first; the second turn's drain takes
 * `DRAIN_MS` and brings `late` (when given; an error fails it), stamping when it answered.
 */
async function runWithSlowDrain(replies: string[], late?: UserMessage | Error) {
  model = await startScriptedModelServer({
    replies: [
      { kind: "toolCalls", calls: [{ id: "c1", name: "noop", arguments: {} }] },
      ...replies.map((text) => ({ kind: "text" as const, text, textChunks: 3 })),
    ],
  });
  const state = stateWithTool();
  const events: AgentEvent[] = [];
  let drains = 0;
  let drainAnsweredAt = 0;
  let reservations = 0;
  const response = await runAgentLoop({
    state,
    llmCall: createOpenAILlmCall({ model: "m", baseURL: model.baseURL, apiKey: "k", stream: true }),
    prepareContext,
    formatMsgForLLM,
    config: {},
    emit: (event) => void events.push(event),
    signal: new AbortController().signal,
    callAheadOfDrain: () => drains > 1,
    reserveModelCall: async () => {
      reservations++;
      return undefined;
    },
    drainInput: async () => {
      drains++;
      if (drains === 1) {
        state.messages.push(userMessage("hello"));
        return [userMessage("hello")];
      }
      await new Promise((resolve) => setTimeout(resolve, DRAIN_MS));
      drainAnsweredAt = Date.now();
      if (drains !== 2 || !late) return [];
      if (late instanceof Error) throw late;
      const moved = [late];
      state.messages.push(...moved);
      return moved;
    },
  });
  return { response, events, state, drainAnsweredAt, reservations, requests: model.requests };
}

describe("a model call sent ahead of the drain", () => {
  it("goes out before the drain answers and is kept when nothing came in", async () => {
    const run = await runWithSlowDrain(["all done"]);
    expect(run.response.content).toEqual([{ type: "text", text: "all done" }]);
    expect(run.requests).toHaveLength(2);
    const second = run.requests[1];
    expect(second?.receivedAt).toBeLessThan(run.drainAnsweredAt);
    // Its text is told after the turn's start, in order, and once.
    const second_turn = run.events.findIndex((e) => e.type === "turnStart" && e.turn === 2);
    const deltas = run.events.flatMap((e, i) =>
      e.type === "messageUpdate" && i > second_turn ? [e.delta] : [],
    );
    expect(second_turn).toBeGreaterThan(0);
    expect(deltas.join("")).toBe("all done");
    expect(run.state.messages.map((m) => m.role).join(" ")).toBe(
      "user assistant toolResult assistant",
    );
  });

  it("is dropped, its text never told, when the drain brings input, and the model is asked again with it", async () => {
    const run = await runWithSlowDrain(["stale answer", "fresh answer"], userMessage("steer"));
    expect(run.response.content).toEqual([{ type: "text", text: "fresh answer" }]);
    expect(run.requests).toHaveLength(3);
    const [, ahead, again] = run.requests;
    expect(ahead?.receivedAt).toBeLessThan(run.drainAnsweredAt);
    expect(userTextsOf(ahead?.body ?? {})).toEqual(["hello"]);
    expect(userTextsOf(again?.body ?? {})).toEqual(["hello", "steer"]);
    const told = run.events.flatMap((e) => (e.type === "messageUpdate" ? [e.delta] : []));
    expect(told.join("")).toBe("fresh answer");
    // The transcript holds the input and one answer for the turn: nothing of the dropped call.
    expect(run.state.messages.map((m) => m.role).join(" ")).toBe(
      "user assistant toolResult user assistant",
    );
    const turnStarts = run.events.filter((e) => e.type === "turnStart");
    expect(turnStarts).toHaveLength(2);
    // One reservation a turn: the dropped call's stands for the call made again.
    expect(run.reservations).toBe(2);
  });

  it("is dropped, its text never told, when the drain fails, and the run ends with the drain's error", async () => {
    const run = await runWithSlowDrain(["never told"], new Error("lease lost"));
    expect(run.requests).toHaveLength(2); // the call went out ahead of the drain
    expect(run.requests[1]?.receivedAt).toBeLessThan(run.drainAnsweredAt);
    expect(run.response.stopReason).toBe("error");
    expect(run.response.errorMessage).toContain("lease lost");
    expect(run.events.filter((e) => e.type === "messageUpdate")).toEqual([]);
    expect(run.state.messages.map((m) => m.role).join(" ")).toBe("user assistant toolResult");
  });
});
