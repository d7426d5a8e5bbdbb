import type { RedisClient } from "../redis/redisConnection.js";
import type { Logger } from "./logger.js";

/** What a process knows about its Redis connection, from the connection's own events. */
export interface RedisWatch {
  /** True while the connection is ready (false before the first connect and after a loss). */
  reachable(): boolean;
  /** The last connection error since the connection was last ready (`connect ECONNREFUSED …`). */
  lastError(): string | undefined;
  /** Stops watching; call it before closing the connection on purpose. */
  stop(): void;
}

/** Options of `watchRedis`. */
export interface RedisWatchOptions {
  log: Logger;
  /** The printable target (`describeRedisTarget`: any password masked), for the log lines. */
  target: string;
}

type Reach = "starting" | "up" | "down";

/**
 * Watches one connection (a process's main one; the others fail and recover with it) and
 * logs each change of reachability once, never once per retry:
 * - `redis unreachable at start; retrying` (warn) when the first connect fails,
 * - `redis unreachable; retrying` (warn) when a ready connection is lost,
 * - `redis reachable again` (info, with `downMs`) when it is ready after either.
 *
 * Logs the target as given (callers mask the password) and error messages only. Never
 * closes, retries or otherwise changes the connection.
 */
export function watchRedis(connection: RedisClient, options: RedisWatchOptions): RedisWatch {
  const { log, target } = options;
  let reach: Reach = connection.status === "ready" ? "up" : "starting";
  let warnedAtStart = false;
  let downSince = Date.now();
  let lastError: string | undefined;
  const onError = (err: Error) => {
    lastError = err.message;
    if (reach !== "starting" || warnedAtStart) return;
    warnedAtStart = true;
    downSince = Date.now();
    log.warn({ redis: target, err: err.message }, "redis unreachable at start; retrying");
  };
  const onReconnecting = () => {
    if (reach !== "up") return;
    reach = "down";
    downSince = Date.now();
    log.warn(
      { redis: target, err: lastError ?? "connection closed" },
      "redis unreachable; retrying",
    );
  };
  const onReady = () => {
    const wasOut = reach === "down" || warnedAtStart;
    reach = "up";
    warnedAtStart = false;
    lastError = undefined;
    if (wasOut)
      log.info({ redis: target, downMs: Date.now() - downSince }, "redis reachable again");
  };
  connection.on("error", onError);
  connection.on("reconnecting", onReconnecting);
  connection.on("ready", onReady);
  return {
    reachable: () => reach === "up" && connection.status === "ready",
    lastError: () => lastError,
    stop() {
      connection.off("error", onError);
      connection.off("reconnecting", onReconnecting);
      connection.off("ready", onReady);
    },
  };
}
