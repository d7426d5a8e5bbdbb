/**
 * What one run used, added up over the model calls and tool calls it kept in its session's
 * transcript (a resumed run's earlier part included). Token counts are the servers' own;
 * a count a server did not report adds 0.
 */
export interface RunUsage {
  /** Prompt tokens over every model call, cached ones included. */
  inputTokens: number;
  /** Completion tokens over every model call, reasoning ones included. */
  outputTokens: number;
  /** The part of `outputTokens` spent reasoning (where the server reports it). */
  reasoningTokens: number;
  /** The part of `inputTokens` read from the server's prompt cache (where it reports it). */
  cachedInputTokens: number;
  /** `inputTokens + outputTokens`. */
  totalTokens: number;
  /** Model answers the run kept (a failed call's error answer included). */
  modelCalls: number;
  /** Tool calls, counted by their results (each call has exactly one). */
  toolCalls: number;
  /**
   * Dollars, from a price table (`prices`, `YIEM_PRICES`): present only when one is set.
   * Calls of a model the table does not name add nothing (see `unpricedModels`).
   */
  costUsd?: number;
  /** With a price table: the models of calls it had no price for. */
  unpricedModels?: string[];
}

/**
 * A model's prices, in dollars per million tokens. `cachedInput` prices the cached part of the
 * input (default: `input`); reasoning tokens are output tokens and cost `output`.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
}

/**
 * Prices by model name: `{ "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 } }`. A
 * call's model is looked up by its exact name, else by the longest name in the table that it
 * starts with followed by `-` (so `gpt-4o` prices `gpt-4o-2024-08-06`).
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Limits on what one run may use. Before each model call the run's usage so far (`RunUsage`,
 * a resumed run's earlier part included) is compared with them: a run that has reached any
 * of them makes no further model call and ends with `stopReason: "budget"`, its text naming
 * the limit. `maxTokens` counts `totalTokens`; `maxCostUsd` needs a price table.
 */
export interface RunBudget {
  maxTokens?: number;
  maxCostUsd?: number;
  maxToolCalls?: number;
  maxModelCalls?: number;
}
