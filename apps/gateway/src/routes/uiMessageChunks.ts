import type { AssistantMessage, BusEvent, PendingApproval, StopReason } from "@yiem/core";
import type { FinishReason, UIMessageChunk } from "ai";
import { approvalIdOf } from "./waitingCalls.js";

/** What a chat answer's `finish` chunk carries as message metadata. */
export interface ChatFinishMetadata {
  sessionId: string;
  runId: string;
  usage: unknown;
}

/**
 * Turns a session's bus events, in order, into the AI SDK's UI message chunks (one answer
 * message): streamed text as text deltas (the rest of a model call's text from its
 * `messageEnd` when live deltas were missed), thinking as reasoning, each tool call as a
 * `tool-<name>` part (input, preliminary progress, output or error), a call awaiting approval
 * as a `tool-approval-request` (its `approvalId` what `POST /v1/approvals` and the approval
 * response take: `approvalIdOf`), a denied call as `tool-output-denied`, turns as steps, and
 * `agentEnd` as `finish` with the run's usage. A child run's call awaiting approval (its event
 * has `path`) is shown too, as a part whose tool call id is `<child session>/<call id>`, with
 * its output once it runs; the child's other calls are not. Keeps what it has sent, so each
 * part is sent once.
 */
export class UiMessageChunks {
  private textId: string | undefined;
  private streamed = "";
  private parts = 0;
  private readonly toolInputs = new Set<string>();
  private inStep = false;
  private lastAnswer: number | undefined;
  /** The approval requests shown, by approval id. */
  private readonly requested = new Set<string>();
  /** The child runs' calls shown (their part's tool call ids). */
  private readonly childCalls = new Set<string>();
  /** Denied calls: their part stays `output-denied` (their error result, the denial, is not shown). */
  private readonly denied = new Set<string>();

  /** `rootSessionId`: the session the answer is of (a child run's calls are named from it). */
  constructor(private readonly rootSessionId: string) {}

  /** The chunks of `event` (none for events the answer does not show). */
  chunksOf(event: BusEvent): UIMessageChunk[] {
    const callId = "toolCallId" in event ? partCallIdOf(event) : undefined;
    if (callId !== undefined && this.denied.has(callId)) return [];
    if (event.path) return this.childChunksOf(event, callId ?? "");
    switch (event.type) {
      case "turnStart":
        this.inStep = true;
        return [{ type: "start-step" }];
      case "turnEnd":
        return this.endStep();
      case "messageUpdate":
        return this.textDelta(event.delta);
      case "messageEnd":
        return event.message.role === "assistant" ? this.answerOf(event.message) : [];
      case "toolExecStart":
        return this.toolInput(event.toolCallId, event.toolName, event.arguments);
      case "toolExecUpdate":
        return [progressOf(event.toolCallId, event.partialResult)];
      case "toolExecEnd":
        return [toolOutput(event.toolCallId, event.result, event.isError)];
      case "toolApprovalRequested":
        return this.approvalRequest(
          event.callKey,
          event.toolCallId,
          event.toolName,
          event.arguments,
        );
      case "toolApprovalDecided":
        return this.decided(event.toolCallId, event.approved);
      case "agentEnd":
        return this.finish(event);
      default:
        return [];
    }
  }

  /**
   * The chunks of a decision on a call shown in an earlier answer, as its
   * `toolApprovalDecided` event would give them (a child run's decision is not seen at the
   * root): a denied call's part becomes `output-denied`; an approved child's call shows its
   * output once it runs. `callId`: the part's tool call id.
   */
  decided(callId: string, approved: boolean): UIMessageChunk[] {
    if (callId.includes("/")) this.childCalls.add(callId);
    if (approved) return [];
    this.denied.add(callId);
    return [{ type: "tool-output-denied", toolCallId: callId }];
  }

  /** A child run's event: its call awaiting approval, and that call's progress and output. */
  private childChunksOf(event: BusEvent, callId: string): UIMessageChunk[] {
    if (event.type === "toolApprovalRequested") {
      this.childCalls.add(callId);
      const approvalId = `${event.sessionId}/${event.callKey}`;
      return this.approvalRequest(approvalId, callId, event.toolName, event.arguments);
    }
    if (!this.childCalls.has(callId)) return [];
    if (event.type === "toolExecUpdate") return [progressOf(callId, event.partialResult)];
    if (event.type === "toolExecEnd") return [toolOutput(callId, event.result, event.isError)];
    return [];
  }

  /** A call's input (once) and its approval request (once). */
  private approvalRequest(
    approvalId: string,
    callId: string,
    toolName: string,
    input: unknown,
  ): UIMessageChunk[] {
    const chunks = this.toolInput(callId, toolName, input);
    if (this.requested.has(approvalId)) return chunks;
    this.requested.add(approvalId);
    return [...chunks, { type: "tool-approval-request", approvalId, toolCallId: callId }];
  }

  /** The chunks that end the answer after `agentEnd`: its text if no `messageEnd` showed it, the step, `finish`. */
  private finish(event: Extract<BusEvent, { type: "agentEnd" }>): UIMessageChunk[] {
    const response = event.response;
    const chunks = response.timestamp === this.lastAnswer ? [] : this.answerOf(response);
    if (response.stopReason === "error") {
      chunks.push({ type: "error", errorText: response.errorMessage ?? "the run failed" });
    }
    const metadata: ChatFinishMetadata = {
      sessionId: event.sessionId,
      runId: event.runId,
      usage: event.usage,
    };
    return [
      ...chunks,
      ...this.endStep(),
      {
        type: "finish",
        finishReason: finishReasonOf(response.stopReason),
        messageMetadata: metadata,
      },
    ];
  }

  /**
   * The chunks that end the answer while its run waits for approval: an approval request for
   * each call of `pending` (the run's tree's, a child run's included) not shown yet, the step,
   * and `finish` with reason `tool-calls` (the client answers with its approval responses).
   */
  parked(runId: string, pending: PendingApproval[]): UIMessageChunk[] {
    const root = this.rootSessionId;
    const requests = pending.flatMap((call) => {
      const callId =
        call.sessionId === root ? call.toolCallId : `${call.sessionId}/${call.toolCallId}`;
      if (callId !== call.toolCallId) this.childCalls.add(callId);
      return this.approvalRequest(approvalIdOf(root, call), callId, call.toolName, call.arguments);
    });
    const metadata = { sessionId: root, runId, awaitingApproval: true };
    return [
      ...requests,
      ...this.endStep(),
      { type: "finish", finishReason: "tool-calls", messageMetadata: metadata },
    ];
  }

  private endStep(): UIMessageChunk[] {
    const chunks = this.endText();
    if (!this.inStep) return chunks;
    this.inStep = false;
    return [...chunks, { type: "finish-step" }];
  }

  private textDelta(delta: string): UIMessageChunk[] {
    if (delta === "") return [];
    const chunks: UIMessageChunk[] = [];
    if (this.textId === undefined) {
      this.textId = this.nextId("text");
      chunks.push({ type: "text-start", id: this.textId });
    }
    this.streamed += delta;
    chunks.push({ type: "text-delta", id: this.textId, delta });
    return chunks;
  }

  private endText(): UIMessageChunk[] {
    if (this.textId === undefined) return [];
    const id = this.textId;
    this.textId = undefined;
    this.streamed = "";
    return [{ type: "text-end", id }];
  }

  /** An assistant message: its reasoning, the text the deltas did not carry, its tool calls' inputs. */
  private answerOf(message: AssistantMessage): UIMessageChunk[] {
    this.lastAnswer = message.timestamp;
    const chunks: UIMessageChunk[] = [];
    for (const block of message.content) {
      if (block.type !== "thinking" || block.thinking === "") continue;
      const id = this.nextId("reasoning");
      chunks.push(
        { type: "reasoning-start", id },
        { type: "reasoning-delta", id, delta: block.thinking },
        { type: "reasoning-end", id },
      );
    }
    const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    const rest = text.startsWith(this.streamed) ? text.slice(this.streamed.length) : "";
    chunks.push(...this.textDelta(rest), ...this.endText());
    for (const block of message.content) {
      if (block.type === "toolCall")
        chunks.push(...this.toolInput(block.id, block.name, block.arguments));
    }
    return chunks;
  }

  private toolInput(toolCallId: string, toolName: string, input: unknown): UIMessageChunk[] {
    if (this.toolInputs.has(toolCallId)) return [];
    this.toolInputs.add(toolCallId);
    return [{ type: "tool-input-available", toolCallId, toolName, input }];
  }

  private nextId(kind: string): string {
    this.parts += 1;
    return `${kind}-${this.parts}`;
  }
}

/** The id of an event's tool part: its call id, `<child session>/<call id>` for a child run's call. */
function partCallIdOf(event: BusEvent & { toolCallId: string }): string {
  return event.path ? `${event.sessionId}/${event.toolCallId}` : event.toolCallId;
}

/** A running call's progress, as a preliminary output. */
function progressOf(toolCallId: string, partialResult: unknown): UIMessageChunk {
  return { type: "tool-output-available", toolCallId, output: partialResult, preliminary: true };
}

/** A finished call's chunk: its output, or its error text (the result's text) when it failed. */
function toolOutput(
  toolCallId: string,
  result: { content: Array<{ type: string; text?: string }> },
  isError: boolean,
): UIMessageChunk {
  if (!isError) return { type: "tool-output-available", toolCallId, output: result };
  const errorText = result.content.map((part) => part.text ?? "").join("") || "the tool failed";
  return { type: "tool-output-error", toolCallId, errorText };
}

/** The AI SDK's finish reason for how a run's final response stopped. */
export function finishReasonOf(stopReason: StopReason): FinishReason {
  switch (stopReason) {
    case "stop":
    case "toolUseTerminated":
      return "stop";
    case "length":
    case "budget":
      return "length";
    case "refusal":
      return "content-filter";
    case "error":
      return "error";
    default:
      return "other";
  }
}
