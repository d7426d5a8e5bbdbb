import type { ScriptedRateLimits } from "./types.js";

/** One admitted request: when it came and the tokens it counts. */
interface Admitted {
  at: number;
  tokens: number;
}

/**
 * A provider's rate limit, as the scripted model keeps it: a sliding window of the requests
 * it admitted and their tokens. A request past `requests` or `tokens` in the last `windowMs`
 * is refused with the ms until room frees up (what its 429's `retry-after` says).
 */
export class ScriptedRateLimiter {
  private readonly admitted: Admitted[] = [];

  constructor(private readonly limits: ScriptedRateLimits) {}

  /**
   * Admits a request of `tokens` (counted from now) and returns its record, or refuses it:
   * `{ retryAfterMs }`.
   */
  take(tokens: number, now = Date.now()): { entry: Admitted } | { retryAfterMs: number } {
    const windowMs = this.limits.windowMs ?? 60_000;
    while (this.admitted.length > 0 && (this.admitted[0] as Admitted).at <= now - windowMs)
      this.admitted.shift();
    const maxRequests = this.limits.requests ?? Number.POSITIVE_INFINITY;
    const maxTokens = this.limits.tokens ?? Number.POSITIVE_INFINITY;
    let count = this.admitted.length + 1;
    let sum = this.admitted.reduce((total, entry) => total + entry.tokens, tokens);
    if (count <= maxRequests && sum <= maxTokens) {
      const entry = { at: now, tokens };
      this.admitted.push(entry);
      return { entry };
    }
    for (const entry of this.admitted) {
      count -= 1;
      sum -= entry.tokens;
      if (count <= maxRequests && sum <= maxTokens)
        return { retryAfterMs: Math.max(1, entry.at + windowMs - now) };
    }
    return { retryAfterMs: windowMs };
  }
}
