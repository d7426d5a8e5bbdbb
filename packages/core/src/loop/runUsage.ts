import type {
  AgentMessage,
  AssistantMessage,
  LlmUsage,
  ModelPrice,
  PriceTable,
  RunUsage,
} from "../types/index.js";

/**
 * Whether an assistant message is a model's answer, as opposed to a stop the loop wrote
 * itself without calling the model (the latest turn over the context cap, an `LlmCall` that
 * threw): those carry neither `model` nor `usage` and end in error or abort.
 */
export function isModelAnswer(message: AssistantMessage): boolean {
  if (message.model || message.usage) return true;
  return message.stopReason !== "error" && message.stopReason !== "aborted";
}

/**
 * The price of `model` in `prices`: its exact name, else the longest name the model's starts
 * with followed by `-` (`gpt-4o` prices `gpt-4o-2024-08-06`); `undefined` when none fits.
 */
export function findPrice(prices: PriceTable, model: string): ModelPrice | undefined {
  const exact = prices[model];
  if (exact) return exact;
  let best: string | undefined;
  for (const name of Object.keys(prices)) {
    if (model.startsWith(`${name}-`) && name.length > (best?.length ?? 0)) best = name;
  }
  return best === undefined ? undefined : prices[best];
}

/**
 * Dollars for one call's usage: the uncached input at `input`, the cached part at
 * `cachedInput` (else `input`), every output token (reasoning ones are among them) at `output`.
 *
 * @example callCostUsd({ inputTokens: 1000, outputTokens: 100, totalTokens: 1100 }, { input: 2.5, output: 10 }) // 0.0035
 */
export function callCostUsd(usage: LlmUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const perMillion =
    uncached * price.input +
    cached * (price.cachedInput ?? price.input) +
    usage.outputTokens * price.output;
  return perMillion / 1_000_000;
}

/** A usage with nothing counted yet (with `costUsd: 0` when a price table is set). */
export function emptyRunUsage(priced: boolean): RunUsage {
  const usage: RunUsage = {
    inputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    cachedInputTokens: 0,
    totalTokens: 0,
    modelCalls: 0,
    toolCalls: 0,
  };
  return priced ? { ...usage, costUsd: 0, unpricedModels: [] } : usage;
}

/** Adds one model answer to `total` (in place). */
function addAnswer(total: RunUsage, message: AssistantMessage, prices: PriceTable | undefined) {
  total.modelCalls++;
  const usage = message.usage;
  if (!usage) return;
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.reasoningTokens += usage.reasoningTokens ?? 0;
  total.cachedInputTokens += usage.cachedInputTokens ?? 0;
  total.totalTokens += usage.inputTokens + usage.outputTokens;
  if (!prices) return;
  const model = message.model ?? "";
  const price = findPrice(prices, model);
  if (price) total.costUsd = (total.costUsd ?? 0) + callCostUsd(usage, price);
  else if (!total.unpricedModels?.includes(model)) total.unpricedModels?.push(model);
}

/** Adds a child run's usage (a tool result's `details.agentRun.usage`) to `total` (in place). */
function addChildRun(total: RunUsage, details: Record<string, unknown> | undefined) {
  const usage = (details?.agentRun as { usage?: RunUsage } | undefined)?.usage;
  if (!usage) return;
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.reasoningTokens += usage.reasoningTokens;
  total.cachedInputTokens += usage.cachedInputTokens;
  total.totalTokens += usage.totalTokens;
  total.modelCalls += usage.modelCalls;
  total.toolCalls += usage.toolCalls;
  if (usage.costUsd !== undefined && total.costUsd !== undefined) total.costUsd += usage.costUsd;
  for (const model of usage.unpricedModels ?? [])
    if (!total.unpricedModels?.includes(model)) total.unpricedModels?.push(model);
}

/**
 * Adds up what a run used from the messages it added to the transcript: each model answer's
 * usage (`isModelAnswer`), and each tool result as a tool call; a child run's result (an
 * `agent__<name>` call) adds the child's whole usage too, so a run's usage is its tree's. With `prices`, the cost too,
 * rounded to a billionth of a dollar. Reads nothing else, so a run resumed from its transcript
 * adds up to the same totals, and a message stored once is counted once.
 *
 * @example sumRunUsage(state.messages.slice(runStart), prices)
 */
export function sumRunUsage(messages: readonly AgentMessage[], prices?: PriceTable): RunUsage {
  const total = emptyRunUsage(prices !== undefined);
  for (const message of messages) {
    if (message.role === "toolResult") {
      total.toolCalls++;
      addChildRun(total, message.details);
    } else if (message.role === "assistant" && isModelAnswer(message))
      addAnswer(total, message, prices);
  }
  if (total.costUsd !== undefined) total.costUsd = Math.round(total.costUsd * 1e9) / 1e9;
  return total;
}
