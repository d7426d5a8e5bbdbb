import type { Logger } from "../ops/logger.js";
import type { RedisClient } from "./redisConnection.js";

/** The oldest Redis Yiem runs on: its scripts declare flags (`#!lua`), its heartbeat uses sharded pub/sub. */
export const MINIMUM_REDIS_VERSION = "7.0.0";

/** `major.minor.patch` as three numbers (missing parts 0). */
function versionParts(version: string): number[] {
  return version.split(".").map((part) => Number.parseInt(part, 10) || 0);
}

/**
 * What is wrong with the Redis whose `INFO server` reply is `info`: a sentence naming its
 * version when it is older than `MINIMUM_REDIS_VERSION`, else undefined (a reply without a
 * version is not judged).
 *
 * @example unsupportedRedisVersion("redis_version:6.2.14\r\n") // "Yiem needs Redis 7.0.0 or newer; this Redis is 6.2.14 …"
 */
export function unsupportedRedisVersion(info: string): string | undefined {
  const version = /redis_version:([\d.]+)/.exec(info)?.[1];
  if (!version) return undefined;
  const [major = 0, minor = 0] = versionParts(version);
  const [needMajor = 0, needMinor = 0] = versionParts(MINIMUM_REDIS_VERSION);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return `Yiem needs Redis ${MINIMUM_REDIS_VERSION} or newer; this Redis is ${version}: every Yiem script would fail to compile (they start with a #!lua shebang)`;
}

/**
 * Each time `connection` gets ready, reads `INFO server` and logs an error when Redis is older
 * than Yiem needs (`unsupportedRedisVersion`), so an old Redis is named at once rather than by
 * every script failing. Never throws: a failed read is not judged.
 */
export function warnOnOldRedis(connection: RedisClient, log: Logger): void {
  connection.on("ready", () => {
    connection
      .info("server")
      .then((info) => {
        const problem = unsupportedRedisVersion(info);
        if (problem) log.error({ minimum: MINIMUM_REDIS_VERSION }, problem);
      })
      .catch(() => undefined);
  });
}
