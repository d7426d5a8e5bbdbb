import type { AssistantMessage, BusEvent, PendingApproval, RunUsage } from "@yiem/core";
import { textOfAssistant } from "./responseItems.js";
import { approvalIdOf } from "./waitingCalls.js";

/** An AG-UI event as it goes on the wire: its `type` (`RUN_STARTED`, …) and its fields. */
export type AguiEvent = { type: string } & Record<string, unknown>;

/** What an AG-UI run answers: the thread (Yiem's session) and the client's run id. */
export interface AguiRunIds {
  threadId: string;
  runId: string;
}

/** The answer schema of a tool approval interrupt: what a resume entry's `payload` holds. */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: "object",
  properties: {
    approved: { type: "boolean", description: "run the call (true) or deny it (false)" },
    reason: { type: "string", description: "why, shown to the model with a denial" },
  },
  required: ["approved"],
} as const;

/** The text of a tool result, as a `TOOL_CALL_RESULT`'s content. */
function resultText(result: { content: Array<{ type: string; text?: string }> }): string {
  return result.content.map((part) => part.text ?? "").join("");
}

/**
 * Turns a session's bus events, in order, into the events of one AG-UI run (the
 * Agent–User Interaction protocol): `RUN_STARTED`; streamed text as `TEXT_MESSAGE_START`,
 * `…_CONTENT`, `…_END` (the rest of a model call's text from its `messageEnd` when live deltas
 * were missed); each tool call as `TOOL_CALL_START`, `…_ARGS` (its arguments as JSON, whole),
 * `…_END`, then `TOOL_CALL_RESULT` once it ran on the cluster; `agentEnd` as a
 * `STATE_SNAPSHOT` of the run's usage and `RUN_FINISHED` (outcome `success` with the answer's
 * text as `result`, or `cancelled` for an aborted run), or `RUN_ERROR` for a failed one. A
 * run that waits for a person's decision ends with `RUN_FINISHED` outcome `interrupt`: one
 * interrupt per call awaiting approval in its tree (`parked`), which the next run's `resume`
 * answers. Keeps what it has sent, so each message and call is sent once and every one is
 * closed before the run ends, as the AG-UI client checks.
 */
export class AguiEvents {
  private textId: string | undefined;
  private streamed = "";
  private messages = 0;
  private lastAnswer: number | undefined;
  private readonly calls = new Set<string>();
  private readonly results = new Set<string>();
  private finished = false;

  constructor(private readonly ids: AguiRunIds) {}

  /** Whether the run's last event (`RUN_FINISHED` or `RUN_ERROR`) was given. */
  get ended(): boolean {
    return this.finished;
  }

  /** `RUN_STARTED`, naming the thread and the client's run. */
  started(): AguiEvent[] {
    return [{ type: "RUN_STARTED", threadId: this.ids.threadId, runId: this.ids.runId }];
  }

  /** The events of `event` (none for events the run does not show, a child run's among them). */
  eventsOf(event: BusEvent): AguiEvent[] {
    if (this.finished || event.path) return [];
    switch (event.type) {
      case "messageUpdate":
        return this.textDelta(event.delta);
      case "messageEnd":
        return event.message.role === "assistant" ? this.answerOf(event.message) : [];
      case "toolExecStart":
        return this.toolCall(event.toolCallId, event.toolName, event.arguments);
      case "toolApprovalRequested":
        return this.toolCall(event.toolCallId, event.toolName, event.arguments);
      case "toolExecEnd":
        return this.toolResult(event.toolCallId, event.result);
      case "agentEnd":
        return this.finish(event.response, event.usage);
      default:
        return [];
    }
  }

  /**
   * The events that end the run while it waits for approval: the calls not shown yet, then
   * `RUN_FINISHED` with an `interrupt` outcome, one interrupt per call of `pending` (a child
   * run's included), its id what a resume entry names.
   */
  parked(pending: PendingApproval[]): AguiEvent[] {
    const events = this.endText();
    for (const call of pending) {
      if (call.sessionId === this.ids.threadId)
        events.push(...this.toolCall(call.toolCallId, call.toolName, call.arguments));
    }
    const interrupts = pending.map((call) => ({
      id: approvalIdOf(this.ids.threadId, call),
      reason: "tool_approval",
      message: `${call.toolName} waits for approval`,
      ...(call.sessionId === this.ids.threadId ? { toolCallId: call.toolCallId } : {}),
      responseSchema: APPROVAL_RESPONSE_SCHEMA,
      metadata: { sessionId: call.sessionId, toolName: call.toolName, arguments: call.arguments },
    }));
    this.finished = true;
    return [...events, { ...this.runEnd(), outcome: { type: "interrupt", interrupts } }];
  }

  /** `RUN_ERROR` with `message` (the run could not be followed); nothing after it. */
  failed(code: string, message: string): AguiEvent[] {
    if (this.finished) return [];
    this.finished = true;
    return [...this.endText(), { type: "RUN_ERROR", code, message }];
  }

  private finish(response: AssistantMessage, usage: RunUsage): AguiEvent[] {
    const events =
      response.timestamp === this.lastAnswer ? this.endText() : this.answerOf(response);
    events.push({ type: "STATE_SNAPSHOT", snapshot: { usage, pendingApprovals: [] } });
    this.finished = true;
    if (response.stopReason === "error") {
      const message = response.errorMessage ?? "the run failed";
      return [...events, { type: "RUN_ERROR", code: "run_failed", message }];
    }
    if (response.stopReason === "aborted")
      return [...events, { ...this.runEnd(), outcome: { type: "cancelled" } }];
    const result = textOfAssistant(response);
    return [...events, { ...this.runEnd(), result, outcome: { type: "success" } }];
  }

  private runEnd(): AguiEvent {
    return { type: "RUN_FINISHED", threadId: this.ids.threadId, runId: this.ids.runId };
  }

  private textDelta(delta: string): AguiEvent[] {
    if (delta === "") return [];
    const events: AguiEvent[] = [];
    if (this.textId === undefined) {
      this.messages += 1;
      this.textId = `${this.ids.runId}-text-${this.messages}`;
      events.push({ type: "TEXT_MESSAGE_START", messageId: this.textId, role: "assistant" });
    }
    this.streamed += delta;
    events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: this.textId, delta });
    return events;
  }

  private endText(): AguiEvent[] {
    if (this.textId === undefined) return [];
    const messageId = this.textId;
    this.textId = undefined;
    this.streamed = "";
    return [{ type: "TEXT_MESSAGE_END", messageId }];
  }

  /** A model call's answer: the text its deltas did not carry, then the message ends. */
  private answerOf(message: AssistantMessage): AguiEvent[] {
    this.lastAnswer = message.timestamp;
    const text = textOfAssistant(message);
    const rest = text.startsWith(this.streamed) ? text.slice(this.streamed.length) : "";
    return [...this.textDelta(rest), ...this.endText()];
  }

  /** A call's start, arguments and end, once per call. */
  private toolCall(toolCallId: string, toolName: string, input: unknown): AguiEvent[] {
    if (this.calls.has(toolCallId)) return [];
    this.calls.add(toolCallId);
    return [
      ...this.endText(),
      { type: "TOOL_CALL_START", toolCallId, toolCallName: toolName },
      { type: "TOOL_CALL_ARGS", toolCallId, delta: JSON.stringify(input ?? {}) },
      { type: "TOOL_CALL_END", toolCallId },
    ];
  }

  private toolResult(
    toolCallId: string,
    result: { content: Array<{ type: string; text?: string }> },
  ): AguiEvent[] {
    if (this.results.has(toolCallId)) return [];
    this.results.add(toolCallId);
    // A call shown by an earlier run (one that waited for approval) gets its result alone.
    const messageId = `${toolCallId}-result`;
    const content = resultText(result);
    return [
      ...this.endText(),
      { type: "TOOL_CALL_RESULT", messageId, toolCallId, content, role: "tool" },
    ];
  }
}
