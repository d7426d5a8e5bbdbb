import { setTimeout as sleep } from "node:timers/promises";
import { redisBackoffMs } from "./redisBackoff.js";
import { isTransientRedisError } from "./redisErrors.js";

/** How `retryTransient` tries again. */
export interface RetryOptions {
  /** Tries in all, the first included; `Infinity` tries until it succeeds or stops. Default 10. */
  attempts?: number;
  /** Which errors are tried again; any other is thrown at once. Default `isTransientRedisError`. */
  retryIf?: (err: unknown) => boolean;
  /** Told of each error that will be tried again (`attempt` counts from 0), before the pause. */
  onRetry?: (err: unknown, attempt: number) => void;
  /** The pause after failed try `attempt` (from 0). Default `redisBackoffMs`. */
  backoffMs?: (attempt: number) => number;
  /** Stops the retries: once it aborts, its reason is thrown instead of trying again. */
  signal?: AbortSignal;
}

/**
 * A `retryIf` that tries every error again, not only transient ones: for a write that must
 * land whatever failed (OOM, a script error, a lost connection), with each failure logged.
 */
export function anyError(): boolean {
  return true;
}

/** Waits `ms`, or less when `signal` aborts first. Never rejects. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(ms, undefined, signal ? { signal } : undefined).catch(() => undefined);
}

/**
 * Runs `command` (given the attempt number, from 0), trying again after a backoff while it
 * fails with an error worth retrying: by default a transient Redis error, at most 10 tries
 * (about 20 s), pausing `redisBackoffMs`. Other errors, and the last one once the tries are
 * spent, are thrown as they are; an aborted `signal` throws its reason. Every Redis retry
 * loop of Yiem goes through here.
 *
 * @example await retryTransient(() => publishEvent(redis, keys, origin, event))
 * @example await retryTransient(() => job.moveToFailed(err, token), { attempts: 5, retryIf: anyError })
 */
export async function retryTransient<T>(
  command: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const { attempts = 10, retryIf = isTransientRedisError, signal } = options;
  const backoffMs = options.backoffMs ?? redisBackoffMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await command(attempt);
    } catch (err) {
      if (attempt + 1 >= attempts || !retryIf(err)) throw err;
      options.onRetry?.(err, attempt);
    }
    if (signal?.aborted) throw signal.reason;
    await pause(backoffMs(attempt), signal);
    if (signal?.aborted) throw signal.reason;
  }
}
