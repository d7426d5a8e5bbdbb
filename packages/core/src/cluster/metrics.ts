import type { Queue } from "bullmq";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { AgentEvent, LlmCall } from "../types/index.js";

/** The coordinator's Prometheus metrics and the hooks that feed them. */
export interface CoordinatorMetrics {
  registry: Registry;
  /** Feed it every published event: counts tool calls by tool and outcome, times them. */
  observe(event: AgentEvent): void;
  /** Wraps an `LlmCall` to time it and count its outcomes. */
  timeLlmCall(llmCall: LlmCall): LlmCall;
  /** Sets the queue depth gauges (called before each scrape). */
  collectQueueDepths(queues: Queue[]): Promise<void>;
}

/**
 * Creates the metrics: `yiem_tool_calls_total{tool,outcome}`, `yiem_tool_call_duration_seconds{tool}`,
 * `yiem_llm_call_duration_seconds{outcome}`, `yiem_queue_jobs{queue,state}`.
 */
export function createCoordinatorMetrics(): CoordinatorMetrics {
  const registry = new Registry();
  const calls = new Counter({
    name: "yiem_tool_calls_total",
    help: "Tool calls by tool and outcome",
    labelNames: ["tool", "outcome"],
    registers: [registry],
  });
  const durations = new Histogram({
    name: "yiem_tool_call_duration_seconds",
    help: "Tool call duration, start to end event",
    labelNames: ["tool"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  const llm = new Histogram({
    name: "yiem_llm_call_duration_seconds",
    help: "LLM call latency",
    labelNames: ["outcome"],
    buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  });
  const depth = new Gauge({
    name: "yiem_queue_jobs",
    help: "Jobs per queue and state",
    labelNames: ["queue", "state"],
    registers: [registry],
  });
  const started = new Map<string, number>();
  return {
    registry,
    observe(event) {
      if (event.type === "toolExecStart") started.set(event.toolCallId, performance.now());
      if (event.type !== "toolExecEnd") return;
      calls.inc({ tool: event.toolName, outcome: event.isError ? "error" : "ok" });
      const since = started.get(event.toolCallId);
      started.delete(event.toolCallId);
      if (since !== undefined)
        durations.observe({ tool: event.toolName }, (performance.now() - since) / 1000);
    },
    timeLlmCall(llmCall) {
      return async (request, signal) => {
        const stop = llm.startTimer();
        const response = await llmCall(request, signal);
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
    async collectQueueDepths(queues) {
      for (const queue of queues) {
        const counts = await queue.getJobCounts(
          "waiting",
          "active",
          "delayed",
          "failed",
          "completed",
        );
        for (const [state, count] of Object.entries(counts))
          depth.set({ queue: queue.name, state }, count);
      }
    },
  };
}
