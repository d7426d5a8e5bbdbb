/**
 * `@yiem/core`: the YiemAgent tool lifecycle in TypeScript, in-process (`YiemAgent`) or on a
 * cluster (`startCoordinator`, `startToolWorker`, `YiemClient`). This file is the whole public
 * API, by name; `api/core.api.md` is its report. `@yiem/core/client` is the part a client
 * needs (everything it exports is here too); `@yiem/core/internal` holds what only the repo's
 * tests and benchmarks use, with no stability promise.
 */

// Named agents: definitions in code or in a YIEM_AGENTS file.
export { llmCallOfAgent, type ModelDefaults } from "./agents/agentRegistry.js";
export {
  type AgentRunFields,
  type AgentRunSettings,
  agentRunSettings,
} from "./agents/agentRunConfig.js";
export { AgentsFileError, loadAgentsFile } from "./agents/agentsFile.js";
export { defaultAgentOf } from "./agents/defaultAgent.js";
export {
  type AgentDefinition,
  type AgentSession,
  DEFAULT_AGENT,
  defineAgent,
  InvalidAgentError,
  type ModelSettings,
} from "./agents/defineAgent.js";
// The client side of a cluster and the shapes every process shares: all of `@yiem/core/client`.
export {
  type AbortOutcome,
  type AgentAnnouncement,
  type AgentEndEvent,
  type AgentEvent,
  type AgentHandoffEvent,
  type AgentMessage,
  type AgentPathLink,
  type AgentRunDetails,
  type AgentStartEvent,
  type AgentSummary,
  type AgentTool,
  type AgentToolCall,
  type AgentToolResult,
  API_KEY_PREFIX,
  type ApprovalRequest,
  type AssistantContent,
  type AssistantMessage,
  type BusEvent,
  type ChainLink,
  type ChildRun,
  type ChosenDefinition,
  type ClosableEvents,
  type ClusterConfig,
  type ClusterKeys,
  ConfigError,
  type CoordinatorJobData,
  type CoordinatorJobResult,
  classifyRedisError,
  clusterKeys,
  connectRedis,
  createApiKey,
  DEFAULTS,
  type DecisionJobData,
  type DecisionJobResult,
  type DecisionOptions,
  DecisionRefusedError,
  describeRedisTarget,
  type EmitFn,
  type EncodedBusEvent,
  type ErrorContext,
  type EventOrigin,
  EventReaderBehindError,
  type EventsOptions,
  eventTextsOf,
  hashApiKey,
  type ImageContent,
  InvalidCoordinatorJobError,
  isMayHaveRun,
  isTransient,
  type JsonSchema,
  type KeyLayout,
  keyLayoutOf,
  type LimitedToolLoad,
  type LlmUsage,
  latestSeq,
  MAY_HAVE_RUN_MESSAGE,
  type MayHaveRunDetails,
  type MessageContent,
  type MessageEndEvent,
  type MessageUpdateEvent,
  type ModelPrice,
  type OpenAIUserPart,
  type ParentCall,
  type PartialResultCallback,
  type PendingApproval,
  type PriceTable,
  type ProcessRole,
  type RedisClient,
  RedisCommandError,
  type RedisConnectionOptions,
  type RedisFailure,
  type RedisTarget,
  RedisUnavailableError,
  type ResolvedTools,
  ResponseTimeoutError,
  type RetryIntent,
  type RunAnswer,
  type RunBudget,
  type RunStatus,
  type RunUsage,
  readClusterConfig,
  readEventsAfter,
  readSettings,
  redisTargetOf,
  resolveAnnouncedTools,
  SETTINGS,
  type SendOptions,
  type SentRequest,
  type SettingDeclaration,
  type SettingName,
  type SettingNameOf,
  type SettingParser,
  type Settings,
  type SettingsOf,
  type SettingsSource,
  type SettingValue,
  type StopReason,
  type TextContent,
  type ThinkingContent,
  type ToolApprovalDecidedEvent,
  type ToolApprovalRequestedEvent,
  type ToolArgs,
  type ToolCallContent,
  type ToolConflict,
  type ToolExecEndEvent,
  type ToolExecStartEvent,
  type ToolExecUpdateEvent,
  type ToolExecuteFn,
  type ToolResultMessage,
  type TurnEndEvent,
  type TurnStartEvent,
  type UserInput,
  type UserMessage,
  type WaitingCallRecord,
  type WorkerInfo,
  whenEventsLive,
  YiemClient,
  type YiemClientOptions,
  YiemError,
  type YiemErrorOptions,
} from "./client/index.js";
// The coordinator process.
export {
  type CoordinatorHandle,
  type CoordinatorOptions,
  startCoordinator,
} from "./coordinator/coordinator.js";
export {
  type AdminCredentials,
  AdminCredentialsError,
  checkAdminCredentials,
  chooseAdminHost,
} from "./coordinator/http/adminServer.js";
export type { Readiness } from "./coordinator/http/readiness.js";
export { lowerBudget } from "./features/budgets/protocol.js";
export type { ResolvedModelLimit } from "./features/flowControl/modelLimits.js";
export {
  checkModelLimits,
  type ModelLimit,
  type ModelLimits,
  readModelLimits,
} from "./features/flowControl/modelLimits.js";
export {
  type ProviderLimitState,
  readProviderLimits,
  WAITING_CALLS_LISTED,
  type WaitingModelCall,
} from "./features/flowControl/providerLimitStore.js";
export { HANDOFF_TOOL_PREFIX, handoffToolName } from "./features/handoffs/handoffTools.js";
// The model adapter.
export { formatMsgForLLM } from "./llm/formatMsgForLLM.js";
export { createOpenAILlmCall, type OpenAILlmCallOptions } from "./llm/openaiLlmCall.js";
// The agent: the class, its free functions, the loop and its parts (lifecycle §1–§8).
export type { AgentState } from "./loop/agentState.js";
export { prepareContext } from "./loop/prepareContext.js";
export { AgentShutdownError } from "./loop/responseQueue.js";
export { type AgentLoopDeps, type RunHandoff, runAgentLoop } from "./loop/runAgentLoop.js";
export { callCostUsd, findPrice, isModelAnswer, sumRunUsage } from "./loop/runUsage.js";
export { InvalidUserInputError, type UserInputLimits } from "./loop/toUserMessage.js";
export {
  followUp,
  runAgent,
  takeResponse,
  YiemAgent,
  type YiemAgentOptions,
} from "./loop/yiemAgent.js";
export { mcpToolName } from "./mcp/mcpAgentTool.js";
// MCP servers as tool sources (a tool worker's `YIEM_MCP_CONFIG`).
export {
  type McpConfig,
  McpConfigError,
  type McpHttpServerConfig,
  type McpListBounds,
  type McpServerCommon,
  type McpServerConfig,
  type McpStdioServerConfig,
  type McpToolOptions,
  readMcpConfig,
} from "./mcp/mcpConfig.js";
export type { McpServerState } from "./mcp/mcpServerConnection.js";
export {
  type McpServerStatus,
  type McpToolSource,
  type McpToolSourceOptions,
  startMcpToolSource,
} from "./mcp/mcpToolSource.js";
export {
  answerHealthRoutes,
  type HealthRoutes,
  type ProcessReadiness,
} from "./ops/healthRoutes.js";
// What a process of the cluster needs around it: heap, logs, HTTP start-up, signals.
export { limitHeapGrowth } from "./ops/heapGrowth.js";
export {
  closeServer,
  createHttpServer,
  DEFAULT_HTTP_LIMITS,
  describeStartFailure,
  type HttpLimits,
  listenOn,
  PortInUseError,
} from "./ops/httpListen.js";
export { createLogger, type Logger } from "./ops/logger.js";
export { loadPriceTable, readPriceTable, readRunBudget } from "./ops/priceTable.js";
export { onShutdownSignal, type ShutdownOptions } from "./ops/shutdownSignals.js";
export {
  keepServingOnUnhandledRejection,
  type UnhandledRejectionOptions,
} from "./ops/unhandledRejections.js";
// What travels between processes: job shapes any BullMQ client or worker may use.
export type { CoordinatorQueueJobData } from "./protocol/coordinatorJob.js";
export type { ToolJobData, ToolJobResult } from "./protocol/toolJobs.js";
export { COORDINATOR_QUEUE } from "./redis/keys.js";
// The settings: one catalogue of every environment variable, its default and its readers.
export type { HttpServerOptions, ShutdownGraceOptions } from "./settings/optionShapes.js";
export { defaultOf, readGivenSetting, readSetting, settingOr } from "./settings/readSettings.js";
export {
  ANY_TENANT,
  checkTenants,
  readTenants,
  settingsOfTenant,
  type TenantDayBudget,
  type TenantSettings,
  type Tenants,
} from "./settings/tenantSettings.js";
// The tool lifecycle: store, loading, the prepare → execute → finalize pipeline, batches.
export { localToolExecutor } from "./tools/batchSteps.js";
export {
  defineTool,
  type ToolDefinition,
  type ToolExecuteContext,
  type ToolReturn,
} from "./tools/defineTool.js";
export { executePreparedToolCall } from "./tools/executePreparedToolCall.js";
export {
  executeToolCalls,
  executeToolCallsParallel,
  executeToolCallsSequential,
} from "./tools/executeToolCalls.js";
export { extractToolCalls } from "./tools/extractToolCalls.js";
export { finalizeExecutedToolCall } from "./tools/finalizeExecutedToolCall.js";
export {
  DEFAULT_MAX_JSON_DEPTH,
  jsonTextNestsDeeperThan,
  valueNestsDeeperThan,
} from "./tools/jsonDepth.js";
export { LIST_TOOLS_NAME, listTool } from "./tools/listTool.js";
export {
  type LoadToolsResult,
  loadTools,
  registerToolFrom,
  type SkippedToolFile,
  type ToolFileSkipReason,
  type ToolLoadFailure,
} from "./tools/loadTools.js";
export { prepareToolCall } from "./tools/prepareToolCall.js";
export { InvalidToolError } from "./tools/toolNames.js";
export type {
  StandardToolSchema,
  ToolArgsOf,
  ToolParameters,
} from "./tools/toolParameters.js";
export { shouldTerminate } from "./tools/toolResults.js";
export { clearTools, getTools, registerTool, ToolStore } from "./tools/toolStore.js";
export { validateRequiredArgs } from "./tools/validateArguments.js";
// Tracing (OpenTelemetry), off unless the OTEL_* variables ask for it.
export { isTracingConfigured, startTracing, type Tracing } from "./tracing/startTracing.js";
// The shapes: messages, tools, events, the pipeline's steps and the model call.
export type {
  AfterToolCallContext,
  AfterToolCallHook,
  AfterToolCallResult,
  AgentContext,
  AgentLoopConfig,
  AgentToolCallBatch,
  BeforeToolCallContext,
  BeforeToolCallHook,
  BeforeToolCallResult,
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  ExecutedOutcome,
  ExecutionContext,
  ExtractToolCallsOptions,
  FinalizedOutcome,
  ImmediateOutcome,
  LlmCall,
  LlmCallOptions,
  LlmRequest,
  LlmRequestFailure,
  OutputCheck,
  OutputMode,
  OutputValidator,
  PreparedToolCall,
  ResponseFormat,
  ToolExecutionMode,
  ToolExecutor,
} from "./types/index.js";
// A tool worker process.
export {
  startToolWorker,
  type ToolWorkerHandle,
  type ToolWorkerOptions,
} from "./worker/toolWorker.js";
