import { Counter, Histogram, type Registry } from "prom-client";

/** The `tool` label of every call whose name is not a registered tool. */
export const UNKNOWN_TOOL_LABEL = "unknown";

/** How a tool call ended, as the `outcome` label: `ok`, `error`, or `aborted` (the run was aborted). */
export type ToolCallOutcome = "ok" | "error" | "aborted";

/** The two series every process that sees tool calls keeps: a count and a duration. */
export interface ToolCallSeries {
  /** `<prefix>_total{tool,outcome}`. */
  calls: Counter<"tool" | "outcome">;
  /** `<prefix>_duration_seconds{tool}`. */
  durations: Histogram<"tool">;
}

/** Buckets for tool-call durations: from a 5 ms lookup to a two-minute job. */
const DURATION_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];

/**
 * Registers the tool-call count and duration series under `prefix` (e.g. `yiem_tool_calls`
 * on coordinators, `yiem_worker_tool_calls` on workers, so sums over both never count a call
 * twice). The `tool` label must be a registered tool or `unknown`, never a model's string.
 */
export function createToolCallSeries(
  registry: Registry,
  prefix: string,
  help: { calls: string; durations: string },
): ToolCallSeries {
  const calls = new Counter({
    name: `${prefix}_total`,
    help: help.calls,
    labelNames: ["tool", "outcome"] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: `${prefix.replace(/_calls$/, "_call")}_duration_seconds`,
    help: help.durations,
    labelNames: ["tool"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  return { calls, durations };
}
