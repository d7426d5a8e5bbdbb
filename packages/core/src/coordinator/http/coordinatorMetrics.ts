import type { Queue } from "bullmq";
import { collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import {
  createToolCallSeries,
  type ToolCallOutcome,
  UNKNOWN_TOOL_LABEL,
} from "../../ops/toolCallSeries.js";
import { ABORTED_MESSAGE } from "../../tools/prepareToolCall.js";
import type { AgentEvent, LlmCall, ToolExecEndEvent } from "../../types/index.js";
import { createQueueDepths } from "./queueDepths.js";

/** The coordinator's Prometheus metrics and the hooks that feed them. */
export interface CoordinatorMetrics {
  registry: Registry;
  /**
   * Feed it every published event: counts tool calls by tool (registered names only, else
   * `unknown`) and outcome (`ok`, `error`, `aborted`), times them.
   */
  observe(event: AgentEvent): void;
  /** Wraps an `LlmCall` to time it and count its outcomes. */
  timeLlmCall(llmCall: LlmCall): LlmCall;
  /**
   * Refreshes the queue depth gauges (called before each scrape). Resolves within 500 ms
   * whatever Redis does, never rejects: without an answer the last depths stay, and
   * `yiem_queue_jobs_age_seconds` says how old they are.
   */
  collectQueueDepths(queues: Queue[]): Promise<void>;
  /**
   * Sets `yiem_tool_definition_conflicts`: the tools live workers announce with different
   * definitions (see `resolveAnnouncedTools`).
   */
  setToolDefinitionConflicts(count: number): void;
}

/** Options of `createCoordinatorMetrics`. */
export interface CoordinatorMetricsOptions {
  /**
   * True for a tool the coordinator has registered. Asked at each call's end, so tools
   * registered later (written tools) get their own label from then on.
   */
  isRegistered: (toolName: string) => boolean;
}

/** The outcome of an ended call; `aborted` only for the exact "Operation aborted" error result. */
function outcomeOf(event: ToolExecEndEvent): ToolCallOutcome {
  if (!event.isError) return "ok";
  const [only, ...rest] = event.result.content;
  const aborted = rest.length === 0 && only?.type === "text" && only.text === ABORTED_MESSAGE;
  return aborted ? "aborted" : "error";
}

/**
 * Creates the metrics: `yiem_tool_calls_total{tool,outcome}`, `yiem_tool_call_duration_seconds{tool}`,
 * `yiem_llm_call_duration_seconds{outcome}`, `yiem_queue_jobs{queue,state}` with
 * `yiem_queue_jobs_age_seconds`, `yiem_tool_definition_conflicts`, and prom-client's default metrics (event-loop lag, heap, GC, …).
 *
 * The `tool` label is a registered tool's name or `unknown`: it never carries a name the model
 * invented, so a model cannot grow the number of series (or `/metrics`) by naming tools.
 */
export function createCoordinatorMetrics(options: CoordinatorMetricsOptions): CoordinatorMetrics {
  const toolLabel = (name: string) => (options.isRegistered(name) ? name : UNKNOWN_TOOL_LABEL);
  const registry = new Registry();
  const { calls, durations } = createToolCallSeries(registry, "yiem_tool_calls", {
    calls: "Tool calls by tool and outcome",
    durations: "Tool call duration, start to end event",
  });
  const llm = new Histogram({
    name: "yiem_llm_call_duration_seconds",
    help: "LLM call latency",
    labelNames: ["outcome"],
    buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  });
  const depths = createQueueDepths({ registry });
  const conflicts = new Gauge({
    name: "yiem_tool_definition_conflicts",
    help: "Tools that live workers announce with different definitions",
    registers: [registry],
  });
  collectDefaultMetrics({ register: registry });
  const started = new Map<string, number>();
  return {
    registry,
    observe(event) {
      if (event.type === "toolExecStart") started.set(event.toolCallId, performance.now());
      if (event.type !== "toolExecEnd") return;
      const tool = toolLabel(event.toolName);
      calls.inc({ tool, outcome: outcomeOf(event) });
      const since = started.get(event.toolCallId);
      started.delete(event.toolCallId);
      if (since !== undefined) durations.observe({ tool }, (performance.now() - since) / 1000);
    },
    timeLlmCall(llmCall) {
      return async (request, signal, callOptions) => {
        const stop = llm.startTimer();
        const response = await llmCall(request, signal, callOptions);
        stop({
          outcome:
            response.stopReason === "error"
              ? "error"
              : response.stopReason === "aborted"
                ? "aborted"
                : "ok",
        });
        return response;
      };
    },
    collectQueueDepths: (queues) => depths.refresh(queues),
    setToolDefinitionConflicts: (count) => conflicts.set(count),
  };
}
