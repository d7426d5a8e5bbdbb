/**
 * `@yiem/testing`: fixtures for testing Yiem and the tools and agents built on it — private
 * Redis servers and Redis Clusters, a scripted OpenAI-compatible model server, a cluster's
 * processes (coordinators, tool workers, gateways) in restartable slots, real child processes
 * with their log lines, and small local HTTP servers.
 */
export type { ClusterLaunch, ClusterRole } from "./cluster/clusterRoles.js";
export {
  type ProcessSlot,
  type ProcessSlotOptions,
  startProcessSlot,
} from "./cluster/processSlot.js";
export {
  type AddProcessOptions,
  type ClusterProcesses,
  type ClusterProcessesOptions,
  startClusterProcesses,
} from "./cluster/startClusterProcesses.js";
export {
  type LocalHttpHandler,
  type LocalHttpServer,
  startLocalHttpServer,
} from "./http/localHttpServer.js";
export {
  type CollectedSpan,
  type OtlpCollector,
  startOtlpCollector,
} from "./http/otlpCollector.js";
export { sampleOf, scrape, waitForSample } from "./http/prometheus.js";
export { loadModelScript } from "./modelScript/loadModelScript.js";
export { ModelScriptError } from "./modelScript/modelScriptError.js";
export { parseModelScript } from "./modelScript/parseModelScript.js";
export { createScriptResponder, type ScriptDecision } from "./modelScript/scriptResponder.js";
export type {
  ModelScript,
  RuleMatch,
  ScriptRule,
  ScriptStep,
  ScriptSteps,
  ScriptToolCall,
  TextStep,
  ToolCallsStep,
} from "./modelScript/types.js";
export { freePort } from "./ports/freePort.js";
export { LOG_LEVELS, type LogEntry, logEntries } from "./processes/logLines.js";
export {
  logMessage,
  type SpawnOptions,
  type SpawnTypeScriptOptions,
  spawnCommand,
  spawnTypeScript,
  type TestProcess,
} from "./processes/processes.js";
export {
  CLUSTER_SLOT_COUNT,
  type ClusterMaster,
  redisSupportsCluster,
  startTestRedisCluster,
  type TestRedisCluster,
} from "./redis/redisCluster.js";
export {
  loopbackServerArgs,
  startTestRedis,
  type TestRedis,
  uniquePrefix,
} from "./redis/redisServer.js";
export {
  type ChatCompletionRequestBody,
  type ScriptedModelOptions,
  type ScriptedModelServer,
  type ScriptedRateLimits,
  type ScriptedReply,
  type ScriptedRequest,
  type ScriptedToolCall,
  type ScriptedUsage,
  startScriptedModelServer,
} from "./scriptedModel/scriptedModelServer.js";
