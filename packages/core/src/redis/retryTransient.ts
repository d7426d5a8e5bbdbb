import { setTimeout as sleep } from "node:timers/promises";
import { redisBackoffMs } from "./redisBackoff.js";
import { isTransientRedisError } from "./redisErrors.js";

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
