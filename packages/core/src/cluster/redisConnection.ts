import { Redis, type RedisOptions } from "ioredis";

/** Where Redis is: a `redis://` / `rediss://` URL, or ioredis options. */
export type RedisTarget = string | RedisOptions;

/** A printable form of a target, with any password replaced by `***`. */
export function describeRedisTarget(target: RedisTarget): string {
  if (typeof target !== "string") return `${target.host ?? "127.0.0.1"}:${target.port ?? 6379}`;
  try {
    const url = new URL(target);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "(unparseable REDIS_URL)";
  }
}

/**
 * Opens an ioredis connection to `target` with `overrides` on top. BullMQ workers and
 * blocking readers need `maxRetriesPerRequest: null`; short-lived clients pass
 * `enableOfflineQueue: false` to fail fast while Redis is down.
 */
export function connectRedis(target: RedisTarget, overrides: RedisOptions = {}): Redis {
  const options: RedisOptions = { lazyConnect: false, ...overrides };
  return typeof target === "string"
    ? new Redis(target, options)
    : new Redis({ ...target, ...options });
}

/** Options for connections that block or belong to BullMQ (never give up while reconnecting). */
export const DURABLE_CONNECTION: RedisOptions = { maxRetriesPerRequest: null };
