import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import {
  createToolCallSeries,
  type ToolCallOutcome,
  UNKNOWN_TOOL_LABEL,
} from "../ops/toolCallSeries.js";

/** A tool worker's Prometheus metrics. */
export interface WorkerMetrics {
  registry: Registry;
  /**
   * Marks a call of `toolName` as started (in flight) and returns the function that ends it:
   * counted by outcome, timed, no longer in flight. Call the returned function once.
   */
  startCall(toolName: string): (outcome: ToolCallOutcome) => void;
  /** Calls in flight now, all tools together. */
  inFlight(): number;
}

/** Options of `createWorkerMetrics`. */
export interface WorkerMetricsOptions {
  /** True for a tool this worker has registered; asked at each call's start. */
  isRegistered: (toolName: string) => boolean;
}

/**
 * Creates a worker's metrics: `yiem_worker_tool_calls_total{tool,outcome}` (`ok`, `error`,
 * `aborted`), `yiem_worker_tool_call_duration_seconds{tool}`,
 * `yiem_worker_tool_calls_in_flight{tool}`, and prom-client's default metrics. The `tool`
 * label is a tool registered on this worker or `unknown`, never a name a job carried.
 * (The coordinator's `yiem_tool_calls_*` count the same calls from its side; these are
 * named apart so that sums over both never count a call twice.)
 */
export function createWorkerMetrics(options: WorkerMetricsOptions): WorkerMetrics {
  const registry = new Registry();
  const { calls, durations } = createToolCallSeries(registry, "yiem_worker_tool_calls", {
    calls: "Tool calls this worker ran, by tool and outcome",
    durations: "Duration of the tool calls this worker ran, job start to end",
  });
  const running = new Gauge({
    name: "yiem_worker_tool_calls_in_flight",
    help: "Tool calls this worker is running now",
    labelNames: ["tool"],
    registers: [registry],
  });
  collectDefaultMetrics({ register: registry });
  let inFlight = 0;
  return {
    registry,
    startCall(toolName) {
      const tool = options.isRegistered(toolName) ? toolName : UNKNOWN_TOOL_LABEL;
      const stopTimer = durations.startTimer({ tool });
      running.inc({ tool });
      inFlight++;
      let ended = false;
      return (outcome) => {
        if (ended) return;
        ended = true;
        inFlight--;
        running.dec({ tool });
        stopTimer();
        calls.inc({ tool, outcome });
      };
    },
    inFlight: () => inFlight,
  };
}

/**
 * Runs one tool job under `metrics` (when given): in flight while `run` runs, then counted as
 * `aborted` when `signal` fired, `error` when `run` threw or returned an error result, `ok`
 * otherwise. Returns or throws what `run` did; never changes it.
 */
export async function measureToolCall<T extends { isError: boolean }>(
  metrics: WorkerMetrics | undefined,
  toolName: string,
  signal: AbortSignal | undefined,
  run: () => Promise<T>,
): Promise<T> {
  if (!metrics) return run();
  const end = metrics.startCall(toolName);
  try {
    const result = await run();
    end(signal?.aborted ? "aborted" : result.isError ? "error" : "ok");
    return result;
  } catch (err) {
    end(signal?.aborted ? "aborted" : "error");
    throw err;
  }
}
