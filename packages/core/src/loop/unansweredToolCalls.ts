import type { AgentMessage, AssistantMessage, ToolCallContent } from "../types/index.js";

/** The last assistant message and those of its tool calls that have no result yet. */
export interface UnansweredToolCalls {
  assistantMessage: AssistantMessage;
  calls: ToolCallContent[];
}

/**
 * Finds the tool calls of the transcript's last assistant message that have no
 * `ToolResultMessage` yet: the work a resumed run must finish before anything else, since
 * every tool call needs exactly one result. Results are stored in call order, so the calls
 * without one are those after the results that follow the message (by position, not by id:
 * a model may repeat an id). Returns nothing when all are answered.
 */
export function findUnansweredToolCalls(
  messages: readonly AgentMessage[],
): UnansweredToolCalls | undefined {
  let results = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as AgentMessage;
    if (message.role === "toolResult") {
      results++;
      continue;
    }
    if (message.role !== "assistant") return undefined;
    const calls = message.content.filter(
      (block): block is ToolCallContent => block.type === "toolCall",
    );
    const unanswered = calls.slice(results);
    return unanswered.length > 0 ? { assistantMessage: message, calls: unanswered } : undefined;
  }
  return undefined;
}
