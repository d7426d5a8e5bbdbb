import type { RunBudget } from "../../types/index.js";

/**
 * The budgets feature's pure shapes and checks: what a `RunBudget` may hold, how two budgets
 * combine (`lowerBudget`) and why one is unusable (`describeBadBudget`). Pure, so agents'
 * definitions, the request protocol and the client may import it.
 */

/** The limits a `RunBudget` may set. */
const BUDGET_FIELDS = ["maxTokens", "maxCostUsd", "maxToolCalls", "maxModelCalls"] as const;

/**
 * The stricter of two budgets, limit by limit: a limit either sets holds, and where both set
 * one the lower wins. A budget can so be lowered, never raised.
 *
 * @example lowerBudget({ maxTokens: 5000 }, { maxTokens: 9000, maxToolCalls: 4 }) // { maxTokens: 5000, maxToolCalls: 4 }
 */
export function lowerBudget(
  first: RunBudget | undefined,
  second: RunBudget | undefined,
): RunBudget | undefined {
  if (!first) return second;
  if (!second) return first;
  const lowered: RunBudget = {};
  for (const field of BUDGET_FIELDS) {
    const limits = [first[field], second[field]].filter((v): v is number => v !== undefined);
    if (limits.length > 0) lowered[field] = Math.min(...limits);
  }
  return lowered;
}

/** What is wrong with a budget: where (`""`, or `.maxTokens` for a limit) and the problem. */
export interface BadBudget {
  at: string;
  problem: string;
}

/**
 * Why `budget` is not a usable `RunBudget`, or `undefined` when it is (or is absent): not an
 * object, an unknown limit (the known ones named), or a limit that is not a number of zero or
 * more. The agent's `budget` and a request's `budget` are checked alike.
 *
 * @example describeBadBudget({ maxTokens: -1 }) // { at: ".maxTokens", problem: "must be a number of zero or more" }
 */
export function describeBadBudget(budget: unknown): BadBudget | undefined {
  if (budget === undefined) return undefined;
  if (typeof budget !== "object" || budget === null || Array.isArray(budget))
    return { at: "", problem: "must be an object" };
  for (const [field, limit] of Object.entries(budget)) {
    if (!(BUDGET_FIELDS as readonly string[]).includes(field))
      return { at: `.${field}`, problem: `unknown limit (known: ${BUDGET_FIELDS.join(", ")})` };
    if (typeof limit !== "number" || !Number.isFinite(limit) || limit < 0)
      return { at: `.${field}`, problem: "must be a number of zero or more" };
  }
  return undefined;
}
