import type { AssistantMessage, BusEvent, PendingApproval, RunUsage } from "@yiem/core";
import { textOfAssistant } from "./responseItems.js";
import { approvalIdOf } from "./waitingCalls.js";

/** An A2A task state as A2A v1.0 names it on the wire (proto JSON). */
export type A2aTaskState =
  | "TASK_STATE_SUBMITTED"
  | "TASK_STATE_WORKING"
  | "TASK_STATE_COMPLETED"
  | "TASK_STATE_FAILED"
  | "TASK_STATE_CANCELED"
  | "TASK_STATE_INPUT_REQUIRED"
  | "TASK_STATE_REJECTED";

/** A part of an A2A message or artifact: text, or structured data. */
export type A2aPart = { text: string } | { data: Record<string, unknown> };

/** An A2A message (the agent's, in a task's status or history). */
export interface A2aMessage {
  messageId: string;
  contextId: string;
  taskId: string;
  role: "ROLE_AGENT" | "ROLE_USER";
  parts: A2aPart[];
  metadata?: Record<string, unknown>;
}

/** An A2A task's status: its state, the message that says it, when. */
export interface A2aStatus {
  state: A2aTaskState;
  message?: A2aMessage;
  timestamp: string;
}

/** An artifact of a task: a model call's text. */
export interface A2aArtifact {
  artifactId: string;
  name: string;
  parts: A2aPart[];
}

/** An A2A task as `GetTask` answers it (and the first event of a stream). */
export interface A2aTaskObject {
  id: string;
  contextId: string;
  status: A2aStatus;
  artifacts: A2aArtifact[];
  history: A2aMessage[];
  metadata: Record<string, unknown>;
}

/** One event of an A2A stream (a `StreamResponse`): the task, a status or an artifact update. */
export type A2aStreamEvent =
  | { task: A2aTaskObject }
  | { statusUpdate: { taskId: string; contextId: string; status: A2aStatus; metadata?: object } }
  | {
      artifactUpdate: {
        taskId: string;
        contextId: string;
        artifact: A2aArtifact;
        append: boolean;
        lastChunk: boolean;
      };
    };

/** The states after which a task changes no more. */
const TERMINAL: ReadonlySet<A2aTaskState> = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

/** The text of a tool result's parts. */
function resultText(result: { content: Array<{ type: string; text?: string }> }): string {
  return result.content.map((part) => part.text ?? "").join("");
}

/**
 * One run as an A2A task (A2A v1.0): folds a session's bus events, in order, into the task
 * (`snapshot`, for `GetTask`, `SendMessage` and `CancelTask`) and into the stream events that
 * say each change (`eventsOf`, for `SendStreamingMessage` and `SubscribeToTask`). Each model
 * call's text is an artifact (`text-<n>`), streamed in chunks; each tool call and each result
 * and each decision on a call is a `TASK_STATE_WORKING` status whose message holds a data part
 * (`toolCall`, `toolResult`, `decision`);
 * the run's end is `TASK_STATE_COMPLETED` (its answer's text as the status message, its usage
 * as metadata), `TASK_STATE_CANCELED` after an abort, `TASK_STATE_FAILED` for a failed run. A
 * run that waits for approval is `TASK_STATE_INPUT_REQUIRED` (`parked`), its message listing
 * the calls as a data part `{ approvals }`. A child run's events are not shown.
 */
export class A2aTask {
  private status: A2aStatus;
  private readonly artifacts: A2aArtifact[] = [];
  private readonly history: A2aMessage[] = [];
  private readonly calls = new Set<string>();
  private readonly results = new Set<string>();
  private open: A2aArtifact | undefined;
  private lastAnswer: number | undefined;
  private usage: RunUsage | undefined;
  private notes = 0;

  constructor(
    private readonly taskId: string,
    private readonly contextId: string,
    state: A2aTaskState = "TASK_STATE_SUBMITTED",
  ) {
    this.status = { state, timestamp: new Date().toISOString() };
  }

  /** Whether the task reached a terminal state (completed, failed, canceled, rejected). */
  get ended(): boolean {
    return TERMINAL.has(this.status.state);
  }

  /** The state the task is in. */
  get state(): A2aTaskState {
    return this.status.state;
  }

  /** The task as it stands. */
  snapshot(): A2aTaskObject {
    return {
      id: this.taskId,
      contextId: this.contextId,
      status: this.status,
      artifacts: this.artifacts.map((a) => ({ ...a, parts: [...a.parts] })),
      history: [...this.history],
      metadata: this.usage ? { usage: this.usage } : {},
    };
  }

  /** The stream events of `event` (none for events the task does not show). */
  eventsOf(event: BusEvent): A2aStreamEvent[] {
    if (this.ended || event.path) return [];
    switch (event.type) {
      case "messageUpdate":
        return this.textChunk(event.delta, false);
      case "messageEnd":
        return event.message.role === "assistant" ? this.answerOf(event.message) : [];
      case "toolExecStart":
      case "toolApprovalRequested":
        return this.toolCall(event.toolCallId, event.toolName, event.arguments);
      case "toolExecEnd":
        return this.toolResult(event.toolCallId, event.toolName, event.result);
      case "toolApprovalDecided": {
        const { toolCallId, toolName, approved, by, reason } = event;
        const decision = {
          toolCallId,
          toolName,
          approved,
          ...(by ? { by } : {}),
          ...(reason ? { reason } : {}),
        };
        return [
          ...this.closeText(),
          this.setStatus("TASK_STATE_WORKING", [{ data: { decision } }]),
        ];
      }
      case "agentEnd":
        return this.finish(event.response, event.usage);
      default:
        return this.working();
    }
  }

  /**
   * The events that say the task waits for a person's decision: the calls not shown yet, then
   * `TASK_STATE_INPUT_REQUIRED` whose message lists `pending` (a child run's calls included),
   * each with the `callId` a decision names.
   */
  parked(pending: PendingApproval[]): A2aStreamEvent[] {
    const events = this.closeText();
    for (const call of pending) {
      if (call.sessionId === this.contextId)
        events.push(...this.toolCall(call.toolCallId, call.toolName, call.arguments));
    }
    const approvals = pending.map((call) => ({
      callId: approvalIdOf(this.contextId, call),
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      arguments: call.arguments,
      sessionId: call.sessionId,
    }));
    const names = pending.map((call) => call.toolName).join(", ");
    const text = `waiting for approval: ${names}. Send a message on this task with a data part { approved, callId? } (or the text "approve" or "deny").`;
    return [
      ...events,
      this.setStatus("TASK_STATE_INPUT_REQUIRED", [{ text }, { data: { approvals } }]),
    ];
  }

  /** `TASK_STATE_FAILED` with `message` (the run was refused, or could not be followed). */
  failed(message: string): A2aStreamEvent[] {
    if (this.ended) return [];
    return [...this.closeText(), this.setStatus("TASK_STATE_FAILED", [{ text: message }])];
  }

  /** `TASK_STATE_WORKING`, once, when the task was submitted or waited for input. */
  working(): A2aStreamEvent[] {
    if (this.status.state === "TASK_STATE_WORKING" || this.ended) return [];
    return [this.setStatus("TASK_STATE_WORKING")];
  }

  private finish(response: AssistantMessage, usage: RunUsage): A2aStreamEvent[] {
    const events =
      response.timestamp === this.lastAnswer ? this.closeText() : this.answerOf(response);
    this.usage = usage;
    if (response.stopReason === "error") {
      const message = response.errorMessage ?? "the run failed";
      return [...events, this.setStatus("TASK_STATE_FAILED", [{ text: message }])];
    }
    if (response.stopReason === "aborted") {
      return [...events, this.setStatus("TASK_STATE_CANCELED", [{ text: "the run was aborted" }])];
    }
    const answer = textOfAssistant(response);
    return [...events, this.setStatus("TASK_STATE_COMPLETED", [{ text: answer }])];
  }

  /** Sets the status (its message of `parts`, if any) and returns its update event. */
  private setStatus(state: A2aTaskState, parts?: A2aPart[]): A2aStreamEvent {
    if (this.status.message) this.history.push(this.status.message);
    const message = parts ? this.agentMessage(parts) : undefined;
    this.status = { state, ...(message ? { message } : {}), timestamp: new Date().toISOString() };
    const metadata = this.ended && this.usage ? { metadata: { usage: this.usage } } : {};
    return {
      statusUpdate: {
        taskId: this.taskId,
        contextId: this.contextId,
        status: this.status,
        ...metadata,
      },
    };
  }

  private agentMessage(parts: A2aPart[]): A2aMessage {
    this.notes += 1;
    return {
      messageId: `${this.taskId}-${this.notes}`,
      contextId: this.contextId,
      taskId: this.taskId,
      role: "ROLE_AGENT",
      parts,
    };
  }

  /** A chunk of the open model call's text (a new artifact for a new call's text). */
  private textChunk(delta: string, last: boolean): A2aStreamEvent[] {
    if (delta === "" && !last) return [];
    const events = this.working();
    const append = this.open !== undefined;
    if (!this.open) {
      this.open = { artifactId: `text-${this.artifacts.length + 1}`, name: "text", parts: [] };
      this.artifacts.push(this.open);
    }
    const whole = this.open.parts[0] as { text: string } | undefined;
    this.open.parts[0] = { text: (whole?.text ?? "") + delta };
    const artifact = { ...this.open, parts: [{ text: delta }] };
    if (last) this.open = undefined;
    const update = { taskId: this.taskId, contextId: this.contextId, artifact, append };
    return [...events, { artifactUpdate: { ...update, lastChunk: last } }];
  }

  /** Ends the open text artifact, if any, with its last (empty) chunk. */
  private closeText(): A2aStreamEvent[] {
    return this.open ? this.textChunk("", true) : [];
  }

  /** A model call's answer: the text its deltas did not carry, as the artifact's last chunk. */
  private answerOf(message: AssistantMessage): A2aStreamEvent[] {
    this.lastAnswer = message.timestamp;
    const text = textOfAssistant(message);
    const streamed = (this.open?.parts[0] as { text: string } | undefined)?.text ?? "";
    const rest = text.startsWith(streamed) ? text.slice(streamed.length) : "";
    if (text === "" && !this.open) return [];
    return this.textChunk(rest, true);
  }

  /** A call as a working status with a `toolCall` data part, once per call. */
  private toolCall(toolCallId: string, toolName: string, input: unknown): A2aStreamEvent[] {
    if (this.calls.has(toolCallId)) return [];
    this.calls.add(toolCallId);
    const toolCall = { id: toolCallId, name: toolName, arguments: input ?? {} };
    return [...this.closeText(), this.setStatus("TASK_STATE_WORKING", [{ data: { toolCall } }])];
  }

  /** A call's result as a working status with a `toolResult` data part, once per call. */
  private toolResult(
    toolCallId: string,
    toolName: string,
    result: { content: Array<{ type: string; text?: string }> },
  ): A2aStreamEvent[] {
    if (this.results.has(toolCallId)) return [];
    this.results.add(toolCallId);
    const toolResult = { id: toolCallId, name: toolName, content: resultText(result) };
    return [...this.closeText(), this.setStatus("TASK_STATE_WORKING", [{ data: { toolResult } }])];
  }
}
