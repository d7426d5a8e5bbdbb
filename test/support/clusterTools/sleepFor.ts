import type { AgentTool } from "@yiem/core";

/**
 * Test tool `sleepFor`: waits `ms` milliseconds (reporting progress every `ms / steps`),
 * honours its signal, and returns `label` with the process that ran it.
 */
export function getTool(): AgentTool {
  return {
    name: "sleepFor",
    label: "Sleep For",
    description: "Waits, then answers with its label and the process that ran it",
    inputSchema: {
      type: "object",
      properties: {
        ms: { type: "integer", minimum: 0 },
        label: { type: "string" },
        steps: { type: "integer", minimum: 1 },
      },
      required: ["ms", "label"],
    },
    parallelToolExecute: true,
    execute: async (_id, args, signal, onPartialResult) => {
      const steps = Number(args.steps ?? 1);
      for (let step = 1; step <= steps; step++) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, Number(args.ms) / steps);
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(new Error("sleepFor aborted"));
          });
        });
        if (steps > 1) onPartialResult({ step, of: steps });
      }
      return {
        content: [{ type: "text", text: `${String(args.label)} done` }],
        details: { pid: process.pid, worker: process.env.YIEM_WORKER_ID ?? "coordinator" },
      };
    },
  };
}
