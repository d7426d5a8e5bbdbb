import type { AgentMessage, AssistantMessage, UserMessage } from "@yiem/core";

/** The result message of tool call `id` of a `noop` tool, as a batch appends it. */
export function toolResultMessage(id: string): AgentMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: "noop",
    content: [{ type: "text", text: `result of ${id}` }],
    details: {},
    isError: false,
    timestamp: Date.now(),
  };
}

/** A user message of `text`, as an input stores it. */
export function userMessage(text: string): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

/** The model's final answer, `done`, without tool calls. */
export function finalAnswer(): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: "done" }],
    stopReason: "stop",
    timestamp: Date.now(),
  };
}
