/**
 * `@yiem/core/client`: what a program that only talks to a cluster needs (the `yiem` CLI):
 * `YiemClient`, reading the configuration, the errors it reports (all `YiemError`s, with Redis'
 * own errors read by `classifyRedisError`), the event and message types. It loads Redis'
 * client and nothing of the coordinator, the workers or the model adapter (no express, Bull
 * Board, openai or QuickJS); BullMQ loads on the first `send`.
 */

export type { AgentSummary } from "../agents/defineAgent.js";
export {
  type ErrorContext,
  isTransient,
  type RetryIntent,
  YiemError,
  type YiemErrorOptions,
} from "../errors/index.js";
export type {
  ApprovalRequest,
  ChainLink,
  PendingApproval,
} from "../features/approvals/approvalStore.js";
export type { DecisionJobData, DecisionJobResult } from "../features/approvals/protocol.js";
export type {
  AgentPathLink,
  AgentRunDetails,
  ChildRun,
  ParentCall,
} from "../features/childRuns/protocol.js";
export {
  type ProviderLimitState,
  type ResolvedModelLimit,
  readProviderLimits,
  WAITING_CALLS_LISTED,
  type WaitingModelCall,
} from "../features/flowControl/providerLimitStore.js";
export type { WaitingCallRecord } from "../features/waitingCallRecord.js";
export { API_KEY_PREFIX, createApiKey, hashApiKey } from "../ops/apiKeys.js";
export type { BusEvent, EncodedBusEvent, EventOrigin } from "../protocol/busEvent.js";
export type {
  CoordinatorJobData,
  CoordinatorJobResult,
  RunAnswer,
} from "../protocol/coordinatorJob.js";
export {
  DecisionRefusedError,
  EventReaderBehindError,
  InvalidCoordinatorJobError,
  RedisUnavailableError,
  ResponseTimeoutError,
} from "../protocol/errors.js";
export {
  isMayHaveRun,
  MAY_HAVE_RUN_MESSAGE,
  type MayHaveRunDetails,
} from "../protocol/mayHaveRun.js";
export { type ClusterKeys, clusterKeys, type KeyLayout, keyLayoutOf } from "../redis/keys.js";
export {
  connectRedis,
  describeRedisTarget,
  type RedisClient,
  type RedisTarget,
  redisTargetOf,
} from "../redis/redisConnection.js";
export {
  classifyRedisError,
  RedisCommandError,
  type RedisFailure,
} from "../redis/redisErrors.js";
export { SETTINGS, type SettingName, type SettingValue } from "../settings/catalogue.js";
export { type ClusterConfig, readClusterConfig } from "../settings/clusterConfig.js";
export { ConfigError } from "../settings/configError.js";
export { DEFAULTS } from "../settings/defaults.js";
export type { RedisConnectionOptions } from "../settings/optionShapes.js";
export type { SettingParser } from "../settings/parsers.js";
export {
  readSettings,
  type SettingNameOf,
  type Settings,
  type SettingsOf,
  type SettingsSource,
} from "../settings/readSettings.js";
export type { ProcessRole, SettingDeclaration } from "../settings/setting.js";
export type { AgentAnnouncement } from "../state/agentAnnouncements.js";
export { latestSeq, readEventsAfter } from "../state/eventBus.js";
export { eventTextsOf } from "../state/streamEntries.js";
export {
  type ChosenDefinition,
  type ResolvedTools,
  resolveAnnouncedTools,
  type ToolConflict,
} from "../state/toolAnnouncements.js";
export type { WorkerInfo } from "../state/workerRegistry.js";
export type {
  AgentEndEvent,
  AgentEvent,
  AgentHandoffEvent,
  AgentMessage,
  AgentStartEvent,
  AgentTool,
  AgentToolCall,
  AgentToolResult,
  AssistantContent,
  AssistantMessage,
  EmitFn,
  ImageContent,
  JsonSchema,
  LlmUsage,
  MessageContent,
  MessageEndEvent,
  MessageUpdateEvent,
  ModelPrice,
  OpenAIUserPart,
  PartialResultCallback,
  PriceTable,
  RunBudget,
  RunUsage,
  StopReason,
  TextContent,
  ThinkingContent,
  ToolApprovalDecidedEvent,
  ToolApprovalRequestedEvent,
  ToolArgs,
  ToolCallContent,
  ToolExecEndEvent,
  ToolExecStartEvent,
  ToolExecUpdateEvent,
  ToolExecuteFn,
  ToolResultMessage,
  TurnEndEvent,
  TurnStartEvent,
  UserInput,
  UserMessage,
} from "../types/index.js";
export { type ClosableEvents, whenEventsLive } from "./liveEvents.js";
export {
  type AbortOutcome,
  type DecisionOptions,
  type EventsOptions,
  type LimitedToolLoad,
  type RunStatus,
  type SendOptions,
  type SentRequest,
  YiemClient,
  type YiemClientOptions,
} from "./yiemClient.js";
