import type { Queue } from "bullmq";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import {
  createProviderLimitSeries,
  type ProviderLimitObserver,
} from "../../features/flowControl/limitObserver.js";
import { callCostUsd, findPrice } from "../../loop/runUsage.js";
import {
  createToolCallSeries,
  type ToolCallOutcome,
  UNKNOWN_TOOL_LABEL,
} from "../../ops/toolCallSeries.js";
import { DEFAULTS } from "../../settings/defaults.js";
import { ABORTED_MESSAGE } from "../../tools/prepareToolCall.js";
import type {
  AgentEvent,
  AssistantMessage,
  LlmCall,
  PriceTable,
  ToolExecEndEvent,
} from "../../types/index.js";
import { createQueueDepths } from "./queueDepths.js";
import { createRunGauges, type RunGaugeSource } from "./runGauges.js";

/** The coordinator's Prometheus metrics and the hooks that feed them. */
export interface CoordinatorMetrics {
  registry: Registry;
  /**
   * Feed it every published event: counts tool calls by tool (registered names only, else
   * `unknown`) and outcome (`ok`, `error`, `aborted`), times them.
   */
  observe(event: AgentEvent): void;
  /**
   * Wraps an `LlmCall` to time it and count its outcomes, and to count each call's tokens and
   * cost by agent and model (`yiem_model_calls_total`, `yiem_llm_tokens_total`,
   * `yiem_llm_cost_usd_total`).
   */
  timeLlmCall(llmCall: LlmCall, agent?: string): LlmCall;
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
  /** Sets where the run gauges come from (`yiem_runs_running`, `yiem_runs_parked`, `yiem_approvals_pending`). */
  setRunSource(source: RunGaugeSource): void;
  /** Refreshes the cluster-wide run gauges (before each scrape); resolves within 500 ms, never rejects. */
  collectRunGauges(): Promise<void>;
  /**
   * The feed of the shared provider limits' series (`yiem_model_limit_wait_seconds`,
   * `yiem_model_limit_429_total`, `yiem_model_limit_tokens_admitted_total`,
   * `yiem_model_limit_calls_waiting`, by `limit`): `createProviderLimitSeries`.
   */
  providerLimits: ProviderLimitObserver;
}

/** Options of `createCoordinatorMetrics`. */
export interface CoordinatorMetricsOptions {
  /**
   * True for a tool the coordinator has registered. Asked at each call's end, so tools
   * registered later (written tools) get their own label from then on.
   */
  isRegistered: (toolName: string) => boolean;
  /** Prices by model (`YIEM_PRICES`): with them, `yiem_llm_cost_usd_total` counts dollars. */
  prices?: PriceTable;
  /** The `agent` label. @defaultValue `DEFAULTS.agentName` */
  agent?: string;
}

/** The counters of what model calls used, by agent and model. */
interface UsageSeries {
  calls: Counter<"agent" | "model">;
  tokens: Counter<"agent" | "model" | "type">;
  cost: Counter<"agent" | "model">;
}

function createUsageSeries(registry: Registry): UsageSeries {
  return {
    calls: new Counter({
      name: "yiem_model_calls_total",
      help: "Model calls this coordinator made, by agent and model",
      labelNames: ["agent", "model"],
      registers: [registry],
    }),
    tokens: new Counter({
      name: "yiem_llm_tokens_total",
      help: "Tokens the model server reported, by agent, model and type (input and output include cached_input and reasoning)",
      labelNames: ["agent", "model", "type"],
      registers: [registry],
    }),
    cost: new Counter({
      name: "yiem_llm_cost_usd_total",
      help: "Dollars of model calls priced by YIEM_PRICES, by agent and model",
      labelNames: ["agent", "model"],
      registers: [registry],
    }),
  };
}

/** Counts one call's answer: the call, its tokens by type, and its cost when priced. */
function countUsage(
  series: UsageSeries,
  agent: string,
  prices: PriceTable | undefined,
  answer: AssistantMessage,
): void {
  const model = answer.model || "unknown";
  series.calls.inc({ agent, model });
  const usage = answer.usage;
  if (!usage) return;
  const byType = {
    input: usage.inputTokens,
    output: usage.outputTokens,
    reasoning: usage.reasoningTokens ?? 0,
    cached_input: usage.cachedInputTokens ?? 0,
  };
  for (const [type, count] of Object.entries(byType))
    if (count > 0) series.tokens.inc({ agent, model, type }, count);
  const price = prices ? findPrice(prices, model) : undefined;
  if (price) series.cost.inc({ agent, model }, callCostUsd(usage, price));
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
 * `yiem_llm_call_duration_seconds{outcome}`, `yiem_model_calls_total{agent,model}`,
 * `yiem_llm_tokens_total{agent,model,type}` (`input`, `output`, `reasoning`, `cached_input`),
 * `yiem_llm_cost_usd_total{agent,model}` (with a price table), `yiem_queue_jobs{queue,state}` with
 * `yiem_queue_jobs_age_seconds`, `yiem_tool_definition_conflicts`, the run gauges (`yiem_runs_running`,
 * `yiem_runs_parked`, `yiem_approvals_pending`: `createRunGauges`), the provider limits' series
 * (`createProviderLimitSeries`), and prom-client's default metrics (event-loop lag, heap, GC, …).
 *
 * The `tool` label is a registered tool's name or `unknown`: it never carries a name the model
 * invented, so a model cannot grow the number of series (or `/metrics`) by naming tools.
 */
export function createCoordinatorMetrics(options: CoordinatorMetricsOptions): CoordinatorMetrics {
  const toolLabel = (name: string) => (options.isRegistered(name) ? name : UNKNOWN_TOOL_LABEL);
  const registry = new Registry();
  const { calls, durations } = createToolCallSeries(registry, "yiem_tool_calls", {
    calls: "Tool calls by tool and outcome",
    durations: "Tool call duration, start (or approval) to end event",
  });
  const llm = new Histogram({
    name: "yiem_llm_call_duration_seconds",
    help: "LLM call latency",
    labelNames: ["outcome"],
    buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  });
  const depths = createQueueDepths({ registry });
  const runs = createRunGauges(registry);
  const usageSeries = createUsageSeries(registry);
  const providerLimits = createProviderLimitSeries(registry);
  const agent = options.agent ?? DEFAULTS.agentName;
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
      // A call that waited for approval is timed from the decision: the wait is not its run.
      if (event.type === "toolApprovalDecided" && started.has(event.toolCallId))
        started.set(event.toolCallId, performance.now());
      if (event.type !== "toolExecEnd") return;
      const tool = toolLabel(event.toolName);
      calls.inc({ tool, outcome: outcomeOf(event) });
      const since = started.get(event.toolCallId);
      started.delete(event.toolCallId);
      if (since !== undefined) durations.observe({ tool }, (performance.now() - since) / 1000);
    },
    timeLlmCall(llmCall, agentName = agent) {
      return async (request, signal, callOptions) => {
        const stop = llm.startTimer();
        const response = await llmCall(request, signal, callOptions);
        countUsage(usageSeries, agentName, options.prices, response);
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
    setRunSource: (source) => runs.setSource(source),
    collectRunGauges: () => runs.refresh(),
    providerLimits,
  };
}
