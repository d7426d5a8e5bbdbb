import type { AgentToolResult, FinalizedOutcome, ToolResultMessage } from "../types/index.js";

/**
 * An error result carrying one text block: how every failure reaches the model.
 *
 * @example createErrorToolResult("Tool getWether not found")
 */
export function createErrorToolResult(message: string): AgentToolResult {
  return { content: [{ type: "text", text: message }], details: {} };
}

/** Wraps a finalized call as the message the model will see. Never throws. */
export function createToolResultMessage(finalized: FinalizedOutcome): ToolResultMessage {
  const { toolCall, result, isError } = finalized;
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    content: result.content,
    details: result.details ?? {},
    isError,
    timestamp: Date.now(),
  };
  if (result.usage) message.usage = result.usage;
  if (result.addedToolNames?.length) message.addedToolNames = result.addedToolNames;
  return message;
}

/**
 * True only when the batch is non-empty and every call's result asked to terminate, so one
 * tool that sets `terminate` for its own reasons cannot stop the agent alone.
 */
export function shouldTerminate(outcomes: readonly FinalizedOutcome[]): boolean {
  return outcomes.length > 0 && outcomes.every((outcome) => outcome.result.terminate === true);
}

/** Turns anything thrown into a readable one-line message. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
