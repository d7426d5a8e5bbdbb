import type { AgentMessage, AssistantMessage, ToolResultMessage } from "./messages.js";
import type { AgentToolResult, ToolArgs } from "./tools.js";
import type { RunUsage } from "./usage.js";

/** A tool call is about to be prepared. Always the first event of a call. */
export interface ToolExecStartEvent {
  type: "toolExecStart";
  toolCallId: string;
  toolName: string;
  arguments: ToolArgs;
  /**
   * On a cluster's bus: `arguments` is a preview, because their JSON was over 4 KiB (see
   * `cutEventArguments`); the whole arguments are in the session's transcript.
   */
  argsTruncated?: true;
  /** With `argsTruncated`: the size of the whole arguments' JSON, in bytes. */
  argsBytes?: number;
}

/** A running tool reported progress through `onPartialResult`. */
export interface ToolExecUpdateEvent {
  type: "toolExecUpdate";
  toolCallId: string;
  toolName: string;
  arguments: ToolArgs;
  /**
   * On a cluster's bus: `arguments` is a preview, because their JSON was over 4 KiB (see
   * `cutEventArguments`); the whole arguments are in the session's transcript.
   */
  argsTruncated?: true;
  /** With `argsTruncated`: the size of the whole arguments' JSON, in bytes. */
  argsBytes?: number;
  partialResult: unknown;
}

/** A tool call has its final (post-hook) result. Always the last event of a call. */
export interface ToolExecEndEvent {
  type: "toolExecEnd";
  toolCallId: string;
  toolName: string;
  result: AgentToolResult;
  isError: boolean;
  /** The tool worker that ran the call, when one did (a remote call on a cluster). */
  workerId?: string;
}

/**
 * A tool call waits for a human decision (`approval: "always"`, or a `beforeToolCall` that
 * returned `requireApproval`): it has not run, and its run is parked until every waiting call
 * of the batch is approved or denied (`yiem approve` / `yiem deny`, or its timeout). Never
 * followed by a `toolExecEnd` of the same call before the decision.
 */
export interface ToolApprovalRequestedEvent {
  type: "toolApprovalRequested";
  toolCallId: string;
  /** The call's key in its session: what `approve` / `deny` name (usually `toolCallId`). */
  callKey: string;
  toolName: string;
  arguments: ToolArgs;
  /**
   * On a cluster's bus: `arguments` is a preview, because their JSON was over 4 KiB (see
   * `cutEventArguments`); the whole arguments are in the session's transcript.
   */
  argsTruncated?: true;
  /** With `argsTruncated`: the size of the whole arguments' JSON, in bytes. */
  argsBytes?: number;
  reason: string;
  /** When it is denied on its own (epoch ms), if it has a timeout. */
  deadline?: number;
}

/**
 * A call awaiting approval was approved or denied (by a person, or by its timeout or an abort
 * of its session). Published once per call, when the decision is recorded; the call's
 * `toolExecStart`/`toolExecEnd` follow when its run resumes.
 */
export interface ToolApprovalDecidedEvent {
  type: "toolApprovalDecided";
  toolCallId: string;
  callKey: string;
  toolName: string;
  approved: boolean;
  /** Who decided (free text), when given. */
  by?: string;
  reason?: string;
  /** Epoch ms. */
  decidedAt: number;
}

/** A run began. */
export interface AgentStartEvent {
  type: "agentStart";
  /** The agent of the run's session (on a cluster). */
  agent?: string;
}

/** A turn (one LLM call and the tool batch it asked for) began. */
export interface TurnStartEvent {
  type: "turnStart";
  turn: number;
}

/** A message was added to the transcript (user input, assistant answer or tool result). */
export interface MessageEndEvent {
  type: "messageEnd";
  message: AgentMessage;
}

/**
 * A piece of the assistant's answer text, as the model streams it (only from an `LlmCall`
 * that streams and reports deltas). The pieces of one LLM call, joined, are the text of the
 * assistant message whose `messageEnd` follows; that event carries the whole message, so a
 * consumer may ignore these. On a cluster they are sent live only: never stored, never
 * replayed, and they take no sequence number (see `BusEvent.live`).
 */
export interface MessageUpdateEvent {
  type: "messageUpdate";
  /** The text that follows the pieces before it. */
  delta: string;
}

/** A turn ended: the assistant message and the tool results it produced. */
export interface TurnEndEvent {
  type: "turnEnd";
  turn: number;
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
}

/** A run ended with its final response. */
export interface AgentEndEvent {
  type: "agentEnd";
  response: AssistantMessage;
  /** The run's structured output (`response.output`), when it had an `outputSchema` and met it. */
  output?: unknown;
  /** What the whole run used (a resumed run's earlier part included): tokens, calls, cost. */
  usage: RunUsage;
}

/**
 * On a cluster: a session was handed over from agent `from` to agent `to` by the call
 * `toolCallId` (`transfer_to_<to>`). Published once, with the batch's results, when the handoff
 * is stored; the run goes on as `to`, and so do the session's later runs.
 */
export interface AgentHandoffEvent {
  type: "agentHandoff";
  from: string;
  to: string;
  toolCallId: string;
}

/** Every event the runtime emits. */
export type AgentEvent =
  | ToolExecStartEvent
  | ToolExecUpdateEvent
  | ToolExecEndEvent
  | ToolApprovalRequestedEvent
  | ToolApprovalDecidedEvent
  | AgentStartEvent
  | TurnStartEvent
  | MessageUpdateEvent
  | MessageEndEvent
  | TurnEndEvent
  | AgentEndEvent
  | AgentHandoffEvent;

/** Receives events. May be async; the runtime awaits it. Should not throw (throws are logged and dropped). */
export type EmitFn = (event: AgentEvent) => void | Promise<void>;
