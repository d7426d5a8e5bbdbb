import type { AgentTool } from "@yiem/core";

/** Test tool `slowTimeout`: never finishes on its own; its `timeoutMs` is 300 ms. */
export function getTool(): AgentTool {
  return {
    name: "slowTimeout",
    label: "Slow With Timeout",
    description: "Never finishes; times out after 300 ms",
    inputSchema: { type: "object", properties: {} },
    parallelToolExecute: true,
    timeoutMs: 300,
    execute: () => new Promise(() => {}),
  };
}
