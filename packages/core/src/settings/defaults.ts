import { DEFAULT_CLUSTER_SHARDS } from "../redis/keys.js";
import { SETTINGS } from "./catalogue.js";

/**
 * Every default of Yiem's cluster, by the name of the option it fills: the catalogue's
 * (`SETTINGS`, where each is declared with its environment variable), plus the few that depend
 * on the Redis (`clusterShards`, `clusterReplicaAcks`) or belong to no variable (a tool's
 * `retries`, `YiemClient`'s waits, the metrics' `agent` label). Read-only; reads no environment.
 */
export const DEFAULTS = Object.freeze({
  redisUrl: SETTINGS.redisUrl.default,
  prefix: SETTINGS.prefix.default,
  /** `YIEM_SHARDS` on a Redis Cluster, so tool traffic spreads over the masters (1 on a single Redis). */
  clusterShards: DEFAULT_CLUSTER_SHARDS,
  /** `YIEM_REPLICA_ACKS` on a Redis Cluster (0 on a single Redis). */
  clusterReplicaAcks: 1,
  replicaAckTimeoutMs: SETTINGS.replicaAckTimeoutMs.default,
  model: SETTINGS.model.default,
  /**
   * The agent a coordinator's runs belong to: the `agent` label of the usage metrics
   * (`yiem_llm_tokens_total`, `yiem_model_calls_total`, `yiem_llm_cost_usd_total`).
   */
  agentName: "default",
  systemPrompt: SETTINGS.systemPrompt.default,
  port: SETTINGS.port.default,
  workerHost: SETTINGS.workerHost.default,
  workerConcurrency: SETTINGS.workerConcurrency.default,
  workerTakeAtOnce: SETTINGS.workerTakeAtOnce.default,
  queues: Object.freeze([...SETTINGS.queues.default]),
  coordinatorConcurrency: SETTINGS.coordinatorConcurrency.default,
  heapGrowthPercent: SETTINGS.heapGrowthPercent.default,
  maxAgentDepth: SETTINGS.maxAgentDepth.default,
  leaseMs: SETTINGS.leaseMs.default,
  lockDurationMs: SETTINGS.lockDurationMs.default,
  stalledIntervalMs: SETTINGS.stalledIntervalMs.default,
  limitedLockDurationMs: SETTINGS.limitedLockDurationMs.default,
  aliveTtlMs: SETTINGS.aliveTtlMs.default,
  alivePollMs: SETTINGS.alivePollMs.default,
  stoppedWorkerGraceMs: SETTINGS.stoppedWorkerGraceMs.default,
  shutdownGraceMs: SETTINGS.shutdownGraceMs.default,
  workerDrainMs: SETTINGS.workerDrainMs.default,
  maxToolCalls: SETTINGS.maxToolCalls.default,
  maxArgumentBytes: SETTINGS.maxArgumentBytes.default,
  maxArgumentDepth: SETTINGS.maxArgumentDepth.default,
  maxInputBytes: SETTINGS.maxInputBytes.default,
  maxContextBytes: SETTINGS.maxContextBytes.default,
  eventStreamMaxBytes: SETTINGS.eventStreamMaxBytes.default,
  requestRetentionS: SETTINGS.requestRetentionS.default,
  toolJobRetentionS: SETTINGS.toolJobRetentionS.default,
  logLevel: SETTINGS.logLevel.default,
  /** A tool's `retries`: how many times a remote call whose worker died is tried again. */
  toolRetries: 0,
  /** How long `YiemClient.waitForResponse` waits. */
  responseTimeoutMs: 120_000,
  /** How long `YiemClient.approve` and `deny` wait for a coordinator to record the decision. */
  decisionTimeoutMs: 30_000,
});
