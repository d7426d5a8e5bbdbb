import type { AgentTool } from "@yiem/core";

/** Test tool `patterned`: its schema has a pattern that backtracks catastrophically on `a…a!`. */
export function getTool(): AgentTool {
  return {
    name: "patterned",
    label: "Patterned",
    description: "Accepts ids made of a's",
    inputSchema: {
      type: "object",
      properties: { id: { type: "string", pattern: "^(a+)+$" } },
      required: ["id"],
    },
    parallelToolExecute: true,
    execute: (_id, args) => ({
      content: [{ type: "text", text: `id ok: ${String(args.id).length}` }],
      details: {},
    }),
  };
}
