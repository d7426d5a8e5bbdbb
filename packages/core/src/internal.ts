/**
 * `@yiem/core/internal`: the parts of the runtime that the repo's own tests, benchmarks and
 * scripts reach for (session state, the pipelined transcript, the remote executor and its
 * result waiter, key builders, Redis helpers, the sandbox, written tools).
 *
 * No stability promise: any name here may change or go in any release, without notice and
 * without a note in the changelog. A program that uses Yiem imports `@yiem/core` or
 * `@yiem/core/client`; this entry has no API report.
 */

export { ClientQueues } from "./client/clientQueues.js";
export {
  buildCoordinatorContext,
  type CoordinatorContext,
  openSessionStore,
  openToolQueues,
  toolQueueFactory,
} from "./coordinator/coordinatorContext.js";
export { startFailureDetector } from "./coordinator/failureDetector.js";
export {
  FIRST_RUN_WAIT_MS,
  httpSideMayStart,
  RUNTIME_WAIT_MS,
} from "./coordinator/http/httpSideStart.js";
export { startIntake } from "./coordinator/intake/coordinatorIntake.js";
export { firstRunAlone } from "./coordinator/intake/firstRunAlone.js";
export { RunSlots } from "./coordinator/intake/runSlots.js";
export { resolveCoordinatorOptions } from "./coordinator/resolveCoordinatorOptions.js";
export { openFeatureRuns } from "./coordinator/run/featureRuns.js";
export {
  createRemoteExecutor,
  type RemoteExecutorOptions,
} from "./coordinator/run/remoteExecutor.js";
export { type JobEnd, ResultWaiter, readJobEnd } from "./coordinator/run/resultWaiter.js";
export { ApprovalStore } from "./features/approvals/approvalStore.js";
export { budgetsFeature } from "./features/budgets/budgetsFeature.js";
export { TreeLedger } from "./features/budgets/treeLedger.js";
export { type ChildCallRequest, ChildRunStore } from "./features/childRuns/childRunStore.js";
export { limitLlmCall } from "./features/flowControl/limitLlmCall.js";
export {
  limitOfCall,
  limitOfModel,
  type ResolvedModelLimit,
} from "./features/flowControl/modelLimits.js";
export { type CallTenant, ProviderLimit } from "./features/flowControl/providerLimit.js";
export { waitForTurn } from "./features/flowControl/waitForTurn.js";
export { dayOf, TenantDayLedger } from "./features/tenants/tenantDayLedger.js";
export { TenantRunSlots } from "./features/tenants/tenantRunSlots.js";
export { tenantsFeature } from "./features/tenants/tenantsFeature.js";
export { createLlmFetch } from "./llm/llmFetch.js";
export { requestedWaitMs } from "./llm/rateLimitHeaders.js";
export { type BundledThread, registerBundledThreads } from "./ops/bundledThreads.js";
export { withV8FlagsAsStarted } from "./ops/heapGrowth.js";
export { silentLogger } from "./ops/logger.js";
export { checkPortFree } from "./ops/portFree.js";
export { type ProcessRuntime, startProcessRuntime } from "./ops/processRuntime.js";
export { markProcessWarm, onProcessWarm } from "./ops/processWarm.js";
export { LeaseLostError } from "./protocol/errors.js";
export { JOB_RETENTION, toolJobRetention } from "./protocol/jobRetention.js";
export { toolJobId } from "./protocol/toolJobs.js";
export {
  classifyBullmqError,
  classifyJobFailure,
  JobFailedError,
  JobMovedOnError,
} from "./redis/bullmqErrors.js";
export { keySlot } from "./redis/keySlot.js";
export {
  DEFAULT_CLUSTER_SHARDS,
  SINGLE_REDIS_LAYOUT,
  toolQueueName,
  writtenToolKeys,
} from "./redis/keys.js";
export { completeJobLean } from "./redis/leanCompletion.js";
export { addJobLean } from "./redis/plainJobs.js";
export { DURABLE_CONNECTION } from "./redis/redisConnection.js";
export { isPassingRedisError, isTransientRedisError } from "./redis/redisErrors.js";
export { MINIMUM_REDIS_VERSION, unsupportedRedisVersion } from "./redis/redisVersion.js";
export { anyError, retryTransient } from "./redis/retryTransient.js";
export { SafeTakeWorker } from "./redis/safeTakeWorker.js";
export {
  checkSandboxCode,
  runInSandbox,
  type SandboxOutcome,
  type SandboxRunOptions,
} from "./sandbox/runInSandbox.js";
export { SandboxSlots } from "./sandbox/sandboxSlots.js";
export { eventBatchesOf } from "./state/eventBatches.js";
export {
  createEventPublisher,
  type EventPublisher,
  parseBusEvent,
  publishEvent,
} from "./state/eventBus.js";
export {
  ENCODED_EVENTS,
  type EventForm,
  PARSED_EVENTS,
} from "./state/eventForms.js";
export { readEventPage } from "./state/eventPages.js";
export { type GuardedWrite, PipelinedTranscript } from "./state/pipelinedTranscript.js";
export { findDeadLives, holderToken, type LifeGrace, newLifeId } from "./state/processLives.js";
export { ResponseWaits } from "./state/responseWaits.js";
export { SessionAgents } from "./state/sessionAgents.js";
export {
  type SessionChannelHold,
  type SessionChannelListener,
  SessionEventHub,
  type SessionEventHubOptions,
} from "./state/sessionEventHub.js";
export {
  type SessionEventStreamOptions,
  streamSessionEvents,
} from "./state/sessionEventStream.js";
export {
  type EnqueueOutcome,
  NOT_AS_EXPECTED,
  type NotAsExpected,
  type RunStart,
  SessionStore,
} from "./state/sessionStore.js";
export { batchMode } from "./tools/executeToolCalls.js";
export { normalizeToolCallBlocks } from "./tools/extractToolCalls.js";
export { type ParsedArguments, parseToolArguments } from "./tools/parseToolArguments.js";
export {
  type BundledPackages,
  registerBundledPackages,
} from "./tools/yiemResolution.js";
export { EagerWorker } from "./worker/eagerWorker.js";
export { type JobEndSink, recordJobEnd } from "./worker/jobEnds.js";
export {
  createWrittenToolsSync,
  syncWrittenTools,
  type WrittenToolsSync,
  type WrittenToolsSyncOptions,
  type WrittenToolsSyncResult,
} from "./writtenTools/syncWrittenTools.js";
export { toAgentTool, writtenToolOf } from "./writtenTools/toAgentTool.js";
export {
  createWriteTool,
  isWriteToolAllowed,
  WRITE_TOOL_DISABLED,
  WRITE_TOOL_NAME,
  type WriteToolOptions,
} from "./writtenTools/writeTool.js";
export {
  loadWrittenTools,
  loadWrittenToolVersion,
  readWrittenToolsRev,
  type SavedWrittenTool,
  saveWrittenTool,
  type WrittenToolsSnapshot,
  writtenToolHistory,
} from "./writtenTools/writtenToolStore.js";
export type {
  WrittenToolDefinition,
  WrittenToolSpec,
  WrittenToolsRedis,
} from "./writtenTools/writtenToolTypes.js";
