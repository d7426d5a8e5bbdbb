import type { AgentMessage, AssistantMessage, ToolCallContent } from "../types/index.js";

/** The last assistant message and those of its tool calls that have no result yet. */
export interface UnansweredToolCalls {
  assistantMessage: AssistantMessage;
  calls: ToolCallContent[];
}

/**
 * Finds the tool calls of the transcript's last assistant message that have no
 * `ToolResultMessage` yet: the work a resumed run must finish before anything else, since
 * every tool call id needs exactly one result. Returns nothing when all are answered.
 */
export function findUnansweredToolCalls(
  messages: readonly AgentMessage[],
): UnansweredToolCalls | undefined {
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as AgentMessage;
    if (message.role === "toolResult") {
      answered.add(message.toolCallId);
      continue;
    }
    if (message.role !== "assistant") return undefined;
    const calls = message.content.filter(
      (block): block is ToolCallContent => block.type === "toolCall" && !answered.has(block.id),
    );
    return calls.length > 0 ? { assistantMessage: message, calls } : undefined;
  }
  return undefined;
}
