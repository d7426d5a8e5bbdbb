import type { AssistantMessage, BusEvent, StopReason } from "@yiem/core";
import type { FinishReason, UIMessageChunk } from "ai";

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
 * as a `tool-approval-request` (its `approvalId` the call key `POST /v1/approvals` takes), a
 * denied call as `tool-output-denied`, turns as steps, and `agentEnd` as `finish` with the
 * run's usage. Keeps what it has sent, so each part is sent once.
 */
export class UiMessageChunks {
  private textId: string | undefined;
  private streamed = "";
  private parts = 0;
  private readonly toolInputs = new Set<string>();
  private inStep = false;
  private lastAnswer: number | undefined;
  private readonly waiting = new Set<string>();
  /** Denied calls: their part stays `output-denied` (their error result, the denial, is not shown). */
  private readonly denied = new Set<string>();

  /** True while a call of the answer awaits a decision (its run parks until then). */
  get awaitsDecision(): boolean {
    return this.waiting.size > 0;
  }

  /** The chunks of `event` (none for events the answer does not show). */
  chunksOf(event: BusEvent): UIMessageChunk[] {
    if ("toolCallId" in event && this.denied.has(event.toolCallId)) return [];
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
        return [
          {
            type: "tool-output-available",
            toolCallId: event.toolCallId,
            output: event.partialResult,
            preliminary: true,
          },
        ];
      case "toolExecEnd":
        return [toolOutput(event.toolCallId, event.result, event.isError)];
      case "toolApprovalRequested":
        this.waiting.add(event.toolCallId);
        return [
          ...this.toolInput(event.toolCallId, event.toolName, event.arguments),
          {
            type: "tool-approval-request",
            approvalId: event.callKey,
            toolCallId: event.toolCallId,
          },
        ];
      case "toolApprovalDecided":
        this.waiting.delete(event.toolCallId);
        if (event.approved) return [];
        this.denied.add(event.toolCallId);
        return [{ type: "tool-output-denied", toolCallId: event.toolCallId }];
      case "agentEnd":
        return this.finish(event);
      default:
        return [];
    }
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
   * The chunks that end the answer while its run is parked for approval: the step, and
   * `finish` with reason `tool-calls` (the client answers with its approval responses).
   */
  parked(sessionId: string, runId: string): UIMessageChunk[] {
    const metadata = { sessionId, runId, awaitingApproval: true };
    return [
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
