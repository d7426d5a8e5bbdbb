import { readSettingsNamed, type Settings, type SettingsSource } from "./readSettings.js";

/** The settings `readClusterConfig` reads: those of the coordinator, the workers and the CLI. */
const CLUSTER_CONFIG_NAMES: readonly (keyof ClusterConfig)[] = [
  "redisUrl",
  "redisClusterNodes",
  "shards",
  "replicaAcks",
  "replicaAckTimeoutMs",
  "prefix",
  "openaiBaseUrl",
  "openaiApiKey",
  "model",
  "pricesFile",
  "budgetJson",
  "modelLimitsJson",
  "tenantsJson",
  "toolsDir",
  "mcpConfig",
  "builtinTools",
  "httpFetchAllow",
  "toolsStrict",
  "port",
  "workerPort",
  "workerHost",
  "workerConcurrency",
  "workerTakeAtOnce",
  "queues",
  "httpMaxConnections",
  "coordinatorConcurrency",
  "heapGrowthPercent",
  "systemPrompt",
  "agentsFile",
  "adminUser",
  "adminPassword",
  "adminHost",
  "adminReadOnly",
  "healthStallMs",
  "approvalTimeoutMs",
  "maxAgentDepth",
  "leaseMs",
  "lockDurationMs",
  "stalledIntervalMs",
  "limitedLockDurationMs",
  "aliveTtlMs",
  "alivePollMs",
  "stoppedWorkerGraceMs",
  "shutdownGraceMs",
  "workerDrainMs",
  "maxToolCalls",
  "maxArgumentBytes",
  "maxArgumentDepth",
  "maxInputBytes",
  "requestRetentionS",
  "toolJobRetentionS",
  "maxContextBytes",
  "eventStreamMaxBytes",
  "logLevel",
];

/**
 * The settings of the coordinator, the tool workers and the CLI together, by the names of
 * `SETTINGS` (docs/CONFIGURATION.md gives each one's variable, default and meaning).
 */
export type ClusterConfig = Pick<
  Settings,
  | "redisUrl"
  | "redisClusterNodes"
  | "shards"
  | "replicaAcks"
  | "replicaAckTimeoutMs"
  | "prefix"
  | "openaiBaseUrl"
  | "openaiApiKey"
  | "model"
  | "pricesFile"
  | "budgetJson"
  | "modelLimitsJson"
  | "tenantsJson"
  | "toolsDir"
  | "mcpConfig"
  | "builtinTools"
  | "httpFetchAllow"
  | "toolsStrict"
  | "port"
  | "workerPort"
  | "workerHost"
  | "workerConcurrency"
  | "workerTakeAtOnce"
  | "queues"
  | "httpMaxConnections"
  | "coordinatorConcurrency"
  | "heapGrowthPercent"
  | "systemPrompt"
  | "agentsFile"
  | "adminUser"
  | "adminPassword"
  | "adminHost"
  | "adminReadOnly"
  | "healthStallMs"
  | "approvalTimeoutMs"
  | "maxAgentDepth"
  | "leaseMs"
  | "lockDurationMs"
  | "stalledIntervalMs"
  | "limitedLockDurationMs"
  | "aliveTtlMs"
  | "alivePollMs"
  | "stoppedWorkerGraceMs"
  | "shutdownGraceMs"
  | "workerDrainMs"
  | "maxToolCalls"
  | "maxArgumentBytes"
  | "maxArgumentDepth"
  | "maxInputBytes"
  | "requestRetentionS"
  | "toolJobRetentionS"
  | "maxContextBytes"
  | "eventStreamMaxBytes"
  | "logLevel"
>;

/**
 * Reads the settings of the coordinator, the workers and the CLI together from the
 * environment, each unset one from its default. Throws `ConfigError` naming the variable
 * when one is malformed. A process reads only its own with `readSettings(role)`.
 *
 * @example const config = readClusterConfig(); // REDIS_URL=redis://127.0.0.1:6379 by default
 */
export function readClusterConfig(env?: SettingsSource): ClusterConfig {
  return readSettingsNamed(CLUSTER_CONFIG_NAMES, env);
}
