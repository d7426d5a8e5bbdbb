import { serverRetryDelayMs } from "./retryPolicy.js";

/** One part of a duration as OpenAI writes its resets (`1m30s`, `6ms`, `0.5s`). */
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** A reset header's duration in ms (`1m30s` → 90 000, `20ms` → 20, `2` → 2000), if it reads as one. */
export function parseResetMs(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const plain = Number(value);
  if (Number.isFinite(plain)) return plain * 1000;
  let total = 0;
  let matched = "";
  for (const [part, amount, unit] of value.matchAll(DURATION_PART)) {
    total += Number(amount) * (UNIT_MS[unit as string] ?? 0);
    matched += part;
  }
  return matched === value.trim() && matched !== "" ? total : undefined;
}

/**
 * The wait a refusal's headers ask for, in ms: `retry-after-ms` or `retry-after` when sent;
 * else, on a 429, the reset of the exhausted limit (`x-ratelimit-reset-requests` when
 * `x-ratelimit-remaining-requests` is 0, `x-ratelimit-reset-tokens` when the tokens' is),
 * or the sooner of the two resets when neither says it is exhausted. Never negative.
 *
 * @example requestedWaitMs(429, new Headers({ "x-ratelimit-reset-tokens": "1.5s" })) // 1500
 */
export function requestedWaitMs(status: number | undefined, headers: Headers | undefined) {
  const asked = serverRetryDelayMs(headers);
  if (asked !== undefined) return Math.max(0, asked);
  if (status !== 429 || !headers) return undefined;
  const requests = parseResetMs(headers.get("x-ratelimit-reset-requests"));
  const tokens = parseResetMs(headers.get("x-ratelimit-reset-tokens"));
  if (headers.get("x-ratelimit-remaining-requests") === "0" && requests !== undefined)
    return requests;
  if (headers.get("x-ratelimit-remaining-tokens") === "0" && tokens !== undefined) return tokens;
  const known = [requests, tokens].filter((ms): ms is number => ms !== undefined);
  return known.length > 0 ? Math.max(0, Math.min(...known)) : undefined;
}
