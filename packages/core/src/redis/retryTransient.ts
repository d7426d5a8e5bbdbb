import { setTimeout as sleep } from "node:timers/promises";
import { redisBackoffMs } from "./redisBackoff.js";

/** Messages of errors a Redis Cluster gives while a failover or a resharding is under way. */
const CLUSTER_TRANSIENT =
  /Too many Cluster redirections|\b(CLUSTERDOWN|TRYAGAIN|MOVED|ASK|LOADING|MASTERDOWN)\b|Connection is closed|Failed to refresh slots cache|\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)\b/;

/**
 * Whether `err` says Redis is away for a moment (a lost connection, a cluster failing over)
 * rather than that the command is wrong.
 */
export function isTransientRedisError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  return CLUSTER_TRANSIENT.test(`${err.message} ${code}`);
}

/**
 * Runs `command`, trying again after `redisBackoffMs` while it fails with a transient error
 * (at most `attempts` times, about 20 s with the default 10). Other errors, and the last
 * transient one, are thrown as they are.
 *
 * @example await retryTransient(() => publishEvent(redis, keys, origin, event))
 */
export async function retryTransient<T>(command: () => Promise<T>, attempts = 10): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await command();
    } catch (err) {
      if (attempt + 1 >= attempts || !isTransientRedisError(err)) throw err;
      await sleep(redisBackoffMs(attempt));
    }
  }
}
