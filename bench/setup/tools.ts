import { type AgentTool, registerTool, ToolStore } from "@yiem/core";
import { monotonicMs } from "../sampling/clock.js";

/** The no-op tool: returns "ok" at once. */
export const NOOP_TOOL = "noop";
/** A no-op that reports when it ran (`details.execAtMs`, monotonic clock), for breakdowns. */
export const TRACED_TOOL = "traced";
/** Emits one partial result stamped with the monotonic clock (`sentAtMs`), then returns. */
export const PARTIAL_TOOL = "partial";

const EMPTY_SCHEMA = { type: "object", properties: {}, additionalProperties: false } as const;

function benchTool(name: string, execute: AgentTool["execute"]): AgentTool {
  return {
    name,
    label: name,
    description: `Benchmark tool ${name}`,
    inputSchema: EMPTY_SCHEMA,
    parallelToolExecute: true,
    execute,
  };
}

/** The benchmark's tools, the same definitions on the coordinator side and on the workers. */
export function benchTools(): AgentTool[] {
  return [
    benchTool(NOOP_TOOL, () => ({ content: [{ type: "text", text: "ok" }], details: {} })),
    benchTool(TRACED_TOOL, () => ({
      content: [{ type: "text", text: "ok" }],
      details: { execAtMs: monotonicMs() },
    })),
    benchTool(PARTIAL_TOOL, (_id, _args, _signal, onPartialResult) => {
      onPartialResult({ sentAtMs: monotonicMs() });
      return { content: [{ type: "text", text: "ok" }], details: {} };
    }),
  ];
}

/** A tool store holding `benchTools()`. */
export function benchToolStore(name: string): ToolStore {
  const store = new ToolStore({ name });
  for (const tool of benchTools()) registerTool(store, tool);
  return store;
}
