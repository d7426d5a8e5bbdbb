import type { AgentTool } from "@yiem/core";

/** Test tool `unservedQueue`: runs on the queue `nobody`, which no test worker serves, so its jobs wait. */
export function getTool(): AgentTool {
  return {
    name: "unservedQueue",
    label: "Unserved Queue",
    description: "Waits forever in a queue nobody serves",
    inputSchema: { type: "object", properties: {} },
    parallelToolExecute: true,
    queue: "nobody",
    execute: () => ({ content: [{ type: "text", text: "ran" }], details: {} }),
  };
}
