import type { AgentTool } from "@yiem/core";

/**
 * Test tool `shoutText` (sequential): its own `prepareArguments` upper-cases `text`, and its
 * schema takes only upper-case text, so the call succeeds only when the arguments are
 * prepared before they are validated. Answers with the text and the worker that ran it.
 */
export function getTool(): AgentTool {
  return {
    name: "shoutText",
    label: "Shout Text",
    description: "Answers with its text in capitals",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", pattern: "^[A-Z ]+$" } },
      required: ["text"],
    },
    prepareArguments: (args) => ({ ...args, text: String(args.text ?? "").toUpperCase() }),
    execute: (_id, args) => ({
      content: [{ type: "text", text: `${String(args.text)} on ${process.env.YIEM_WORKER_ID}` }],
      details: { worker: process.env.YIEM_WORKER_ID ?? "coordinator" },
    }),
  };
}
