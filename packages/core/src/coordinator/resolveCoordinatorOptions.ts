import { defaultOf } from "../settings/readSettings.js";

/** The options of `startCoordinator` (`CoordinatorOptions`) whose defaults the catalogue gives. */
export interface DefaultedCoordinatorOptions {
  prefix?: string;
  systemPrompt?: string;
  model?: string;
  maxAgentDepth?: number;
  replicaAckTimeoutMs?: number;
  eventStreamMaxBytes?: number;
  concurrency?: number;
  leaseMs?: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  aliveTtlMs?: number;
  alivePollMs?: number;
  requestRetentionS?: number;
  toolJobRetentionS?: number;
  shutdownGraceMs?: number;
  stoppedWorkerGraceMs?: number;
  host?: string;
  admin?: { host?: string };
}

/**
 * Options `O` with every default applied (by `resolveCoordinatorOptions`): what the
 * coordinator's parts read, so none of them applies a default of its own.
 */
export type ResolvedCoordinatorOptions<O extends DefaultedCoordinatorOptions> = O &
  Required<Omit<DefaultedCoordinatorOptions, "host" | "admin">>;

/**
 * Applies the settings catalogue's defaults to the options a caller left out, once, at the
 * start: an option given wins, else the default (a process passes the values of its
 * environment, read by `readSettings("coordinator")`). `host` takes the deprecated
 * `admin.host` when not given. The defaults that depend on the Redis (`shards`,
 * `replicaAcks`) or on the admin credentials (`host`) are left to the parts that know.
 * Reads no environment.
 */
export function resolveCoordinatorOptions<O extends DefaultedCoordinatorOptions>(
  options: O,
): ResolvedCoordinatorOptions<O> {
  return {
    ...options,
    host: options.host ?? options.admin?.host,
    prefix: options.prefix ?? defaultOf("prefix"),
    systemPrompt: options.systemPrompt ?? defaultOf("systemPrompt"),
    model: options.model ?? defaultOf("model"),
    maxAgentDepth: options.maxAgentDepth ?? defaultOf("maxAgentDepth"),
    replicaAckTimeoutMs: options.replicaAckTimeoutMs ?? defaultOf("replicaAckTimeoutMs"),
    eventStreamMaxBytes: options.eventStreamMaxBytes ?? defaultOf("eventStreamMaxBytes"),
    concurrency: options.concurrency ?? defaultOf("coordinatorConcurrency"),
    leaseMs: options.leaseMs ?? defaultOf("leaseMs"),
    lockDurationMs: options.lockDurationMs ?? defaultOf("lockDurationMs"),
    stalledIntervalMs: options.stalledIntervalMs ?? defaultOf("stalledIntervalMs"),
    aliveTtlMs: options.aliveTtlMs ?? defaultOf("aliveTtlMs"),
    alivePollMs: options.alivePollMs ?? defaultOf("alivePollMs"),
    requestRetentionS: options.requestRetentionS ?? defaultOf("requestRetentionS"),
    toolJobRetentionS: options.toolJobRetentionS ?? defaultOf("toolJobRetentionS"),
    shutdownGraceMs: options.shutdownGraceMs ?? defaultOf("shutdownGraceMs"),
    stoppedWorkerGraceMs: options.stoppedWorkerGraceMs ?? defaultOf("stoppedWorkerGraceMs"),
  };
}
