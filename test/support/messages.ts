import type { AgentMessage } from "@yiem/core";

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
