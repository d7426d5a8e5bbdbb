import type { AgentTool } from "@yiem/core";

/**
 * Test tool `echoText`: reports `text` as its progress, then answers with `text` unchanged
 * (so a test can send any text through a tool's progress and result). Never changes it.
 */
export function getTool(): AgentTool {
  return {
    name: "echoText",
    label: "Echo Text",
    description: "Reports its text as progress, then answers with it",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    },
    parallelToolExecute: true,
    execute: (_id, args, _signal, onPartialResult) => {
      const text = String(args.text);
      onPartialResult(text);
      return { content: [{ type: "text", text }], details: {} };
    },
  };
}
