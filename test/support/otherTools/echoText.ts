import type { AgentTool } from "@yiem/core";

/**
 * Test tool `echoText`, defined otherwise than `clusterTools/echoText.ts` (another
 * description, `text` capped at 20 characters): workers loading both folders announce one
 * tool with two definitions.
 */
export function getTool(): AgentTool {
  return {
    name: "echoText",
    label: "Echo Text",
    description: "Answers with its text (at most 20 characters)",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", maxLength: 20 } },
      required: ["text"],
    },
    parallelToolExecute: true,
    execute: (_id, args) => ({ content: [{ type: "text", text: String(args.text) }], details: {} }),
  };
}
