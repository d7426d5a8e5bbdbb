import type { AgentTool } from "@yiem/core";

/** Test tool `uniqueList`: takes an array of distinct objects (schema `uniqueItems`) and counts it. */
export function getTool(): AgentTool {
  return {
    name: "uniqueList",
    label: "Unique List",
    description: "Counts a list of distinct records",
    inputSchema: {
      type: "object",
      properties: { records: { type: "array", uniqueItems: true, items: { type: "object" } } },
      required: ["records"],
    },
    parallelToolExecute: true,
    execute: (_id, args) => ({
      content: [{ type: "text", text: `${(args.records as unknown[]).length} records` }],
      details: {},
    }),
  };
}
