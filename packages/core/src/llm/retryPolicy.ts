import { APIConnectionError, APIError, APIUserAbortError } from "openai";

/** How failed calls are retried. All times in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt (so at most `maxRetries + 1` requests). */
  maxRetries: number;
  /** The first backoff delay; each retry doubles it. */
  initialDelayMs: number;
  /** Cap on every delay, including one asked for by `retry-after` / `retry-after-ms`. */
  maxDelayMs: number;
}

/** HTTP statuses worth another try: timeout, conflict, rate limit, and every 5xx. */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/**
 * True when an error from the `openai` SDK is transient: a connection failure or timeout, or
 * HTTP 408, 409, 429 or 5xx. Aborts and every other status (400, 401, 403, 404, 422, ...)
 * are final.
 */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return false;
  if (err instanceof APIConnectionError) return true;
  if (!(err instanceof APIError) || typeof err.status !== "number") return false;
  return RETRYABLE_STATUSES.has(err.status) || err.status >= 500;
}

/**
 * How long to wait before retry number `attempt` (0 for the first retry): the server's
 * `retry-after-ms` or `retry-after` (seconds or an HTTP date) when present, else
 * exponential backoff with jitter; always capped by `policy.maxDelayMs` and never negative.
 *
 * @example retryDelayMs(2, undefined, { maxRetries: 3, initialDelayMs: 250, maxDelayMs: 10_000 }) // 500..1000
 */
export function retryDelayMs(attempt: number, err: unknown, policy: RetryPolicy): number {
  const asked = err instanceof APIError ? serverRetryDelayMs(err.headers) : undefined;
  const delay = asked ?? backoffMs(attempt, policy);
  return Math.max(0, Math.min(delay, policy.maxDelayMs));
}

function backoffMs(attempt: number, policy: RetryPolicy): number {
  const base = Math.min(policy.initialDelayMs * 2 ** attempt, policy.maxDelayMs);
  return base / 2 + Math.random() * (base / 2);
}

/** The delay a response's headers ask for, if any. */
export function serverRetryDelayMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms)) return ms;
  const header = headers?.get("retry-after");
  if (!header) return undefined;
  const seconds = Number.parseFloat(header);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isFinite(date) ? date - Date.now() : undefined;
}

/**
 * Waits `ms`, or less when `signal` fires. Resolves `true` after a full wait, `false` when
 * aborted. Never rejects.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
