import type { RedisClient } from "./redisConnection.js";

/** What ioredis keeps of the scripts defined on a connection (`defineCommand`), by name. */
interface ScriptHolder {
  scriptsSet?: Record<string, { sha?: string }>;
}

/**
 * Names the scripts defined on `redis` (`defineCommand`: Yiem's, and BullMQ's, named
 * `<script>:<version>`) by their SHA1, as an `EVALSHA` carries it: the returned function gives
 * the name without BullMQ's version (`moveToActive`, `yiemClaimRequestSession`), or
 * `undefined` for a script not defined there. Scripts defined later are found too: an unknown
 * SHA reads the connection's scripts again when their count changed. Never throws.
 *
 * @example nameOfScript(redis)(sha) // "moveToFinished"
 */
export function nameOfScript(redis: RedisClient): (sha: string) => string | undefined {
  const holder = redis as unknown as ScriptHolder;
  const names = new Map<string, string>();
  let seen = -1;
  const read = () => {
    const scripts = Object.entries(holder.scriptsSet ?? {});
    seen = scripts.length;
    for (const [name, script] of scripts) {
      if (script.sha) names.set(script.sha, name.split(":")[0] ?? name);
    }
  };
  return (sha) => {
    const known = names.get(sha);
    if (known !== undefined) return known;
    if (Object.keys(holder.scriptsSet ?? {}).length === seen) return undefined;
    read();
    return names.get(sha);
  };
}
