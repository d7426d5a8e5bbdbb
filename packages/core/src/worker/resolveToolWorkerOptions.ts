import { defaultOf } from "../settings/readSettings.js";

/** The options of `startToolWorker` (`ToolWorkerOptions`) whose defaults the catalogue gives. */
export interface DefaultedToolWorkerOptions {
  prefix?: string;
  queues?: string[];
  concurrency?: number;
  takeAtOnce?: number;
  eventStreamMaxBytes?: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  limitedLockDurationMs?: number;
  aliveTtlMs?: number;
  host?: string;
}

/** Options `O` with every default applied (by `resolveToolWorkerOptions`). */
export type ResolvedToolWorkerOptions<O extends DefaultedToolWorkerOptions> = O &
  Required<DefaultedToolWorkerOptions>;

/**
 * Applies the settings catalogue's defaults to the options a caller left out, once, at the
 * start: an option given wins, else the default (the worker process passes its environment's
 * values, read by `readSettings("worker")`). `shards` is left to the key layout (it depends on
 * the Redis). Reads no environment.
 */
export function resolveToolWorkerOptions<O extends DefaultedToolWorkerOptions>(
  options: O,
): ResolvedToolWorkerOptions<O> {
  return {
    ...options,
    prefix: options.prefix ?? defaultOf("prefix"),
    queues: options.queues ?? defaultOf("queues"),
    concurrency: options.concurrency ?? defaultOf("workerConcurrency"),
    takeAtOnce: options.takeAtOnce ?? defaultOf("workerTakeAtOnce"),
    eventStreamMaxBytes: options.eventStreamMaxBytes ?? defaultOf("eventStreamMaxBytes"),
    lockDurationMs: options.lockDurationMs ?? defaultOf("lockDurationMs"),
    stalledIntervalMs: options.stalledIntervalMs ?? defaultOf("stalledIntervalMs"),
    limitedLockDurationMs: options.limitedLockDurationMs ?? defaultOf("limitedLockDurationMs"),
    aliveTtlMs: options.aliveTtlMs ?? defaultOf("aliveTtlMs"),
    host: options.host ?? defaultOf("workerHost"),
  };
}
