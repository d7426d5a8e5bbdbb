/**
 * The Open Responses face's numbering (`apps/gateway/src/routes/responseFold.ts`): a run's
 * events, as a gateway reads them live (streamed text included) and as another reads them
 * later (stored events only), make the same stream: the same sequence numbers for the same
 * events, and a stream resumed after any number sends exactly what was not sent yet.
 */
import type { AssistantMessage, BusEvent } from "@yiem/core";
import { describe, expect, it } from "vitest";
import {
  ResponseFold,
  type ResponseRun,
  type ResponseStreamEvent,
} from "../../apps/gateway/src/routes/responseFold.js";

const run: ResponseRun = {
  runId: "r1",
  sessionId: "s1",
  agent: "default",
  afterSeq: 4,
  createdAt: 1_700_000_000_000,
};

const usage = {
  inputTokens: 10,
  outputTokens: 5,
  reasoningTokens: 0,
  cachedInputTokens: 0,
  totalTokens: 15,
  modelCalls: 2,
  toolCalls: 1,
};

function assistant(content: AssistantMessage["content"]): AssistantMessage {
  return { role: "assistant", content, stopReason: "stop", timestamp: 1 };
}

/**
 * A run as its session's stream holds it: a model call that says `Let me look.` and calls
 * `lookUp`, its result, then a model call streaming `It is noon in Lima.` in three pieces.
 * With `live`, the streamed pieces are there (as a reader following live sees them).
 */
function runEvents(live: boolean): BusEvent[] {
  let seq = run.afterSeq;
  const stored = (event: object): BusEvent =>
    ({ ...event, sessionId: "s1", runId: "r1", seq: ++seq, ts: seq }) as BusEvent;
  const piece = (delta: string): BusEvent[] =>
    live
      ? [{ type: "messageUpdate", delta, sessionId: "s1", runId: "r1", seq, ts: seq, live: true }]
      : [];
  const call = { type: "toolCall" as const, id: "c1", name: "lookUp", arguments: { q: "Lima" } };
  const final = assistant([{ type: "text", text: "It is noon in Lima." }]);
  return [
    stored({ type: "agentStart", agent: "default" }),
    stored({ type: "turnStart", turn: 1 }),
    ...piece("Let me look."),
    stored({
      type: "messageEnd",
      message: assistant([{ type: "text", text: "Let me look." }, call]),
    }),
    stored({
      type: "messageEnd",
      message: {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "lookUp",
        content: [{ type: "text", text: "noon" }],
        details: {},
        isError: false,
        timestamp: 2,
      },
    }),
    stored({ type: "turnStart", turn: 2 }),
    ...["It is ", "noon ", "in Lima."].flatMap(piece),
    stored({ type: "messageEnd", message: final }),
    stored({ type: "agentEnd", response: final, usage }),
  ];
}

/** The stream a fold makes of `events`, after `startingAfter`. */
function streamOf(events: BusEvent[], startingAfter = -1): ResponseStreamEvent[] {
  const sent: ResponseStreamEvent[] = [];
  const fold = new ResponseFold(run, { startingAfter, emit: (event) => sent.push(event) });
  fold.begin();
  for (const event of events) fold.add(event);
  return sent;
}

function textOf(events: ResponseStreamEvent[]): string {
  return events.map((e) => (e.type === "response.output_text.delta" ? e.delta : "")).join("");
}

describe("the Open Responses stream of a run", () => {
  it("numbers a live reading and a later replay alike, apart from how the text is cut", () => {
    const live = streamOf(runEvents(true));
    const replay = streamOf(runEvents(false));
    const notText = (events: ResponseStreamEvent[]) =>
      events.filter((e) => e.type !== "response.output_text.delta");
    expect(notText(replay)).toEqual(notText(live));
    expect(textOf(replay)).toBe(textOf(live));
    expect(live.filter((e) => e.type === "response.output_text.delta")).toHaveLength(4);
    const numbers = live.map((e) => e.sequence_number);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
    const done = live.at(-1) as unknown as { type: string; response: { output: unknown[] } };
    expect(done.type).toBe("response.completed");
    expect(done.response.output).toMatchObject([
      { type: "message", content: [{ text: "Let me look." }] },
      { type: "function_call", call_id: "c1", name: "lookUp", arguments: '{"q":"Lima"}' },
      { type: "function_call_output", call_id: "c1", output: "noon" },
      { type: "message", content: [{ text: "It is noon in Lima." }] },
    ]);
  });

  it("resumed after any number it sent, replayed on another gateway, sends the rest exactly once", () => {
    const live = streamOf(runEvents(true));
    for (const [i, event] of live.entries()) {
      const rest = streamOf(runEvents(false), event.sequence_number);
      const sentBefore = live.slice(0, i + 1);
      expect(textOf(sentBefore) + textOf(rest)).toBe(textOf(live));
      const kinds = (events: ResponseStreamEvent[]) =>
        events.filter((e) => e.type !== "response.output_text.delta").map((e) => e.sequence_number);
      expect([...kinds(sentBefore), ...kinds(rest)]).toEqual(kinds(live));
    }
  });

  it("sends the text of a model call it joined while streaming whole with its end", () => {
    const events = runEvents(true);
    const sent: ResponseStreamEvent[] = [];
    // The reader came after the second turnStart was stored: both calls' text may have begun.
    const joinedAt = run.afterSeq + 5;
    const fold = new ResponseFold(run, { liveAfter: joinedAt, emit: (e) => sent.push(e) });
    for (const event of events) fold.add(event);
    const deltas = sent.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.map((e) => e.delta)).toEqual(["Let me look.", "It is noon in Lima."]);
  });
});
