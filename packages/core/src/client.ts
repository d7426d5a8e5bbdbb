/**
 * `@yiem/core/client`: what a program that only talks to a cluster needs (the `yiem` CLI):
 * `YiemClient`, reading the configuration, the errors it reports, the event and message
 * types. It loads Redis' client and nothing of the coordinator, the workers or the model
 * adapter (no express, Bull Board, openai or QuickJS); BullMQ loads on the first `send`.
 */

export type { PendingApproval } from "./cluster/approvalStore.js";
export type { BusEvent, EventOrigin } from "./cluster/busEvent.js";
export { type ClusterConfig, ConfigError, readClusterConfig } from "./cluster/clusterConfig.js";
export type { DecisionJobData, DecisionJobResult } from "./cluster/coordinatorDecision.js";
export type { CoordinatorJobData, CoordinatorJobResult } from "./cluster/coordinatorJob.js";
export {
  DecisionRefusedError,
  InvalidCoordinatorJobError,
  RedisUnavailableError,
  ResponseTimeoutError,
} from "./cluster/errors.js";
export { latestSeq, readEventsAfter } from "./cluster/eventBus.js";
export type { WorkerInfo } from "./cluster/workerRegistry.js";
export {
  type DecisionOptions,
  type EventsOptions,
  type LimitedToolLoad,
  type SendOptions,
  YiemClient,
  type YiemClientOptions,
} from "./cluster/yiemClient.js";
export { type ClusterKeys, clusterKeys, keyLayoutOf } from "./redis/keys.js";
export {
  connectRedis,
  describeRedisTarget,
  type RedisClient,
  type RedisTarget,
  redisTargetOf,
} from "./redis/redisConnection.js";
export type * from "./types/index.js";
