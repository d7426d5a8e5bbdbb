import type { AgentTool } from "@yiem/core";

/**
 * Test tool `coordinatorOnly`: only the coordinator loads it (workers skip it when
 * `YIEM_WORKER_ID` is set), so a parallel call of it reaches a worker that lacks it.
 */
export function getTool(): AgentTool {
  if (process.env.YIEM_WORKER_ID) throw new Error("not loaded on workers");
  return {
    name: "coordinatorOnly",
    label: "Coordinator Only",
    description: "Exists only on the coordinator",
    inputSchema: { type: "object", properties: {} },
    parallelToolExecute: true,
    execute: () => ({ content: [{ type: "text", text: "ran" }], details: {} }),
  };
}
