import type {
  AssistantMessage,
  BusEvent,
  RunUsage,
  StopReason,
  ToolCallContent,
  ToolResultMessage,
} from "@yiem/core";

/**
 * The sequence numbers of the Open Responses stream, made from the session's durable event
 * numbers so that any gateway numbers a run's stream the same way, live or replayed: the
 * Responses events a stored event `s` makes are numbered `s × SEQUENCE_WINDOW + k` (k = 0,
 * 1, 2…), the text an assistant message streams after stored event `s` is numbered in the
 * upper half of that window by how many characters of it were sent (`textSequence`). Numbers
 * grow but are not contiguous.
 */
export const SEQUENCE_WINDOW = 10_000_000;

/** Where streamed text is numbered in a window (see `SEQUENCE_WINDOW`). */
const TEXT_BASE = SEQUENCE_WINDOW / 2;

/** The id of the response that stands for run `runId`. */
export function responseIdOf(runId: string): string {
  return `resp_${runId}`;
}

/** The run a response id names, or `undefined` for an id this face did not make. */
export function runIdOfResponse(responseId: string): string | undefined {
  const match = /^resp_([A-Za-z0-9_.:-]{1,128})$/.exec(responseId);
  return match?.[1];
}

/** The first sequence number of the text streamed after stored event `anchor`. */
export function textBaseOf(anchor: number): number {
  return anchor * SEQUENCE_WINDOW + TEXT_BASE;
}

/**
 * The sequence number of a text delta that ends `end` characters into its message (the
 * message's text anchored after stored event `anchor`); a text past the window's room (5
 * million characters) keeps the last number.
 */
export function textSequence(anchor: number, end: number): number {
  return textBaseOf(anchor) + Math.min(end, TEXT_BASE - 2);
}

/** An output item of a response, as OpenAI's `ResponseOutputItem` (and `function_call_output`). */
export type OutputItem = { type: string; id: string } & Record<string, unknown>;

/** The text of an assistant message (its text blocks, joined). */
export function textOfAssistant(message: AssistantMessage): string {
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** A `function_call` item for a tool call the model asked for (it runs on the cluster). */
export function functionCallItem(call: ToolCallContent): OutputItem {
  return {
    type: "function_call",
    id: `fc_${call.id}`,
    call_id: call.id,
    name: call.name,
    arguments: call.rawArguments ?? JSON.stringify(call.arguments),
    status: "completed",
  };
}

/** A `function_call_output` item: the result of a call that ran on the cluster, as its text. */
export function functionCallOutputItem(result: ToolResultMessage): OutputItem {
  const output = result.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  return {
    type: "function_call_output",
    id: `fco_${result.toolCallId}`,
    call_id: result.toolCallId,
    output,
    status: result.isError ? "incomplete" : "completed",
  };
}

/**
 * An `mcp_approval_request` item for a call that waits for a person's decision: its id is what
 * `POST /v1/approvals` takes as `toolCallId` with the response's session (a child run's call:
 * `<child session>/<call key>`, as the chat faces name it).
 */
export function approvalRequestItem(
  event: Extract<BusEvent, { type: "toolApprovalRequested" }>,
): OutputItem {
  const id = event.path ? `${event.sessionId}/${event.callKey}` : event.callKey;
  return {
    type: "mcp_approval_request",
    id,
    name: event.toolName,
    arguments: JSON.stringify(event.arguments),
    server_label: "yiem",
  };
}

/** A response's status. */
export type ResponseStatus =
  | "queued"
  | "in_progress"
  | "completed"
  | "failed"
  | "cancelled"
  | "incomplete";

/** How a run that ended is told: its status, and the error or why it is incomplete. */
export interface RunEnding {
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete: { reason: string } | null;
}

/**
 * A run's end in Responses' terms: aborted is `cancelled`, a failed model call `failed`, a
 * response cut by its length or the run's budget `incomplete` (`max_output_tokens`), else
 * `completed`.
 */
export function endingOf(response: AssistantMessage): RunEnding {
  const stop: StopReason = response.stopReason;
  if (stop === "aborted") return { status: "cancelled", error: null, incomplete: null };
  if (stop === "error") {
    const message = response.errorMessage ?? "the run failed";
    return { status: "failed", error: { code: "server_error", message }, incomplete: null };
  }
  if (stop === "length" || stop === "budget") {
    return { status: "incomplete", error: null, incomplete: { reason: "max_output_tokens" } };
  }
  return { status: "completed", error: null, incomplete: null };
}

/** The stream event that ends a response with `status`. */
export function terminalEventOf(status: ResponseStatus): string {
  if (status === "completed") return "response.completed";
  if (status === "failed") return "response.failed";
  return "response.incomplete";
}

/** A run's usage in Responses' shape. */
export function responseUsageOf(usage: RunUsage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}
