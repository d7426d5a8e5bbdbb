import type { AgentTool } from "@yiem/core";

/** Test tool `whereAmI` (sequential): answers with the process that ran it. */
export function getTool(): AgentTool {
  return {
    name: "whereAmI",
    label: "Where Am I",
    description: "Answers with the pid of the process that ran it",
    inputSchema: { type: "object", properties: {} },
    parallelToolExecute: false,
    execute: () => ({
      content: [{ type: "text", text: `pid ${process.pid}` }],
      details: { pid: process.pid, worker: process.env.YIEM_WORKER_ID ?? "coordinator" },
    }),
  };
}
