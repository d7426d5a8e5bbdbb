import type { LlmUsage } from "../types/index.js";
import { isJsonObject, type JsonObject, numberOrUndefined } from "./jsonShape.js";

/**
 * Maps OpenAI-style usage to `LlmUsage`; `undefined` when the server sent none.
 *
 * - `inputTokens` is `prompt_tokens`; `cachedInputTokens` is
 *   `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens` (both
 *   counted inside `prompt_tokens`).
 * - `reasoningTokens` is `completion_tokens_details.reasoning_tokens`. OpenAI counts them
 *   inside `completion_tokens`; xAI and Gemini's compatible endpoint count them apart (their
 *   `total_tokens` is prompt + completion + reasoning). `outputTokens` includes them either
 *   way: they are added to `completion_tokens` when `total_tokens` says they were left out,
 *   or, with no total that tells, when they exceed `completion_tokens` (see
 *   `reasoningCountedApart`).
 * - `totalTokens` is `total_tokens`, else `inputTokens + outputTokens`.
 *
 * @example
 * mapUsage({ prompt_tokens: 32, completion_tokens: 9, total_tokens: 135,
 *   completion_tokens_details: { reasoning_tokens: 94 } })
 * // { inputTokens: 32, outputTokens: 103, totalTokens: 135, reasoningTokens: 94 }
 */
export function mapUsage(usage: unknown): LlmUsage | undefined {
  if (!isJsonObject(usage)) return undefined;
  const inputTokens = numberOrUndefined(usage.prompt_tokens) ?? 0;
  const completionTokens = numberOrUndefined(usage.completion_tokens) ?? 0;
  const total = numberOrUndefined(usage.total_tokens);
  const reasoningTokens = numberOrUndefined(
    detail(usage.completion_tokens_details, "reasoning_tokens"),
  );
  const apart =
    reasoningTokens !== undefined &&
    reasoningCountedApart({ inputTokens, completionTokens, reasoningTokens, total });
  const outputTokens = completionTokens + (apart ? reasoningTokens : 0);
  const mapped: LlmUsage = {
    inputTokens,
    outputTokens,
    totalTokens: total ?? inputTokens + outputTokens,
  };
  if (reasoningTokens !== undefined) mapped.reasoningTokens = reasoningTokens;
  const cached = readCachedTokens(usage);
  if (cached !== undefined) mapped.cachedInputTokens = cached;
  return mapped;
}

/** The counts `reasoningCountedApart` decides from. */
interface UsageCounts {
  inputTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  total: number | undefined;
}

/**
 * True when the server counted reasoning tokens apart from `completion_tokens`. A total that
 * adds up one way or the other decides; otherwise reasoning above the completion count can
 * only have been counted apart, and anything else is read as OpenAI's convention (inside).
 * Limit: a server that counts apart, sends no consistent total and reasons less than it
 * writes is undercounted by its reasoning.
 */
export function reasoningCountedApart(counts: UsageCounts): boolean {
  const { inputTokens, completionTokens, reasoningTokens, total } = counts;
  if (reasoningTokens <= 0) return false;
  if (total === inputTokens + completionTokens + reasoningTokens) return true;
  if (total === inputTokens + completionTokens) return false;
  return reasoningTokens > completionTokens;
}

function readCachedTokens(usage: JsonObject): number | undefined {
  return (
    numberOrUndefined(detail(usage.prompt_tokens_details, "cached_tokens")) ??
    numberOrUndefined(usage.prompt_cache_hit_tokens)
  );
}

function detail(details: unknown, field: string): unknown {
  return isJsonObject(details) ? details[field] : undefined;
}
