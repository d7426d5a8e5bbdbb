import type { AssistantMessage, RunBudget, RunUsage } from "../types/index.js";

/** Each limit of a budget, the usage it reads, and how its text names it. */
const LIMITS: ReadonlyArray<{
  key: keyof RunBudget;
  used: (usage: RunUsage) => number | undefined;
  what: string;
}> = [
  { key: "maxModelCalls", used: (u) => u.modelCalls, what: "model calls" },
  { key: "maxToolCalls", used: (u) => u.toolCalls, what: "tool calls" },
  { key: "maxTokens", used: (u) => u.totalTokens, what: "tokens" },
  { key: "maxCostUsd", used: (u) => u.costUsd, what: "dollars" },
];

/**
 * The first limit of `budget` that `usage` has reached (used ≥ limit), described, e.g.
 * `maxModelCalls (3 model calls; used 3)`; `undefined` when none is. `maxCostUsd` is reached
 * only when the usage carries a cost (a price table is set).
 */
export function reachedBudget(usage: RunUsage, budget: RunBudget | undefined): string | undefined {
  if (!budget) return undefined;
  for (const { key, used, what } of LIMITS) {
    const limit = budget[key];
    const value = used(usage);
    if (limit === undefined || value === undefined || value < limit) continue;
    return `${key} (${limit} ${what}; used ${value})`;
  }
  return undefined;
}

/** The final response of a run that reached a limit of its budget: the text names it. */
export function buildBudgetResponse(reached: string): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: `The run stopped: its budget was reached: ${reached}.` }],
    stopReason: "budget",
    errorMessage: `budget reached: ${reached}`,
    timestamp: Date.now(),
  };
}

/**
 * What is left of `budget` after `usage`, limit by limit (never below 0): the budget a child
 * run gets, so the tree under a run stays within the run's own. `undefined` without a budget.
 *
 * @example remainingBudget({ maxModelCalls: 5 }, usage) // { maxModelCalls: 3 } after 2 model calls
 */
export function remainingBudget(
  budget: RunBudget | undefined,
  usage: RunUsage,
): RunBudget | undefined {
  if (!budget) return undefined;
  const left: RunBudget = {};
  for (const { key, used } of LIMITS) {
    const limit = budget[key];
    if (limit === undefined) continue;
    left[key] = Math.max(0, limit - (used(usage) ?? 0));
  }
  return left;
}
