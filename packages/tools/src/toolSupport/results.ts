import type { AgentToolResult } from "@yiem/core";

/**
 * A tool result of one text block plus its details.
 *
 * @example textResult("Current time in UTC: ...", { timezone: "UTC" })
 */
export function textResult(text: string, details: Record<string, unknown>): AgentToolResult {
  return { content: [{ type: "text", text }], details };
}
