import { Queue, type Worker } from "bullmq";
import { AgentRegistry, type ServedAgent } from "../agents/agentRegistry.js";
import type { AgentDefinition } from "../agents/defineAgent.js";
import { abortWaitingRun, type DecisionDeps } from "../features/approvals/approvalDecisions.js";
import {
  type ApprovalServices,
  startApprovalServices,
} from "../features/approvals/approvalServices.js";
import { ApprovalStore } from "../features/approvals/approvalStore.js";
import { approvalsFeature } from "../features/approvals/approvalsFeature.js";
import { budgetsFeature } from "../features/budgets/budgetsFeature.js";
import { ChildRunStore } from "../features/childRuns/childRunStore.js";
import { childRunsFeature } from "../features/childRuns/childRunsFeature.js";
import { announceModelLimits, limitAgentCalls } from "../features/flowControl/limitAgentCalls.js";
import type { ProviderLimitObserver } from "../features/flowControl/limitObserver.js";
import { checkModelLimits, type ModelLimits } from "../features/flowControl/modelLimits.js";
import { HandoffStore } from "../features/handoffs/handoffStore.js";
import { handoffsFeature } from "../features/handoffs/handoffsFeature.js";
import type { RunFeature } from "../features/runFeature.js";
import { tenantsFeature } from "../features/tenants/tenantsFeature.js";
import { resolveOutputSpec } from "../loop/outputSpec.js";
import type { UserInputLimits } from "../loop/toUserMessage.js";
import type { AliveBeat } from "../ops/aliveBeat.js";
import type { Logger } from "../ops/logger.js";
import { checkPortFree } from "../ops/portFree.js";
import { type ProcessRuntime, startProcessRuntime } from "../ops/processRuntime.js";
import type { RedisWatch } from "../ops/redisWatch.js";
import type { ControlMessage } from "../protocol/controlMessages.js";
import type { ClusterKeys } from "../redis/keys.js";
import { addJobLean } from "../redis/plainJobs.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { SafeTakeWorker } from "../redis/safeTakeWorker.js";
import type {
  HttpServerOptions,
  RedisConnectionOptions,
  ShutdownGraceOptions,
} from "../settings/optionShapes.js";
import { checkTenants, type Tenants } from "../settings/tenantSettings.js";
import { REQUEST_SESSION_FIELD, RequestSessions } from "../state/requestSessions.js";
import { ResponseWaits } from "../state/responseWaits.js";
import { SessionAgents } from "../state/sessionAgents.js";
import type { SessionStore } from "../state/sessionStore.js";
import { listWorkers } from "../state/workerRegistry.js";
import { registerTool, type ToolStore } from "../tools/toolStore.js";
import type {
  AgentEvent,
  AgentLoopConfig,
  ExtractToolCallsOptions,
  LlmCall,
} from "../types/index.js";
import {
  createWriteTool,
  createWrittenToolsSync,
  isWriteToolAllowed,
} from "../writtenTools/index.js";
import { type AgentAnnouncer, startAgentAnnouncer } from "./agentAnnouncer.js";
import { type AnnouncedTools, startAnnouncedTools } from "./announcedTools.js";
import {
  buildCoordinatorContext,
  type CoordinatorContext,
  openSessionStore,
  openToolQueues,
  toolQueueFactory,
} from "./coordinatorContext.js";
import { type FailureDetector, startFailureDetector } from "./failureDetector.js";
import {
  type AdminServerHandle,
  checkAdminCredentials,
  chooseAdminHost,
  startAdminServer,
} from "./http/adminServer.js";
import { createCoordinatorMetrics } from "./http/coordinatorMetrics.js";
import { httpSideMayStart, runsWaitOn } from "./http/httpSideStart.js";
import { checkReadiness, type Readiness } from "./http/readiness.js";
import { type ClusterRunCounts, readClusterRunCounts } from "./http/runGauges.js";
import { type Intake, startIntake } from "./intake/coordinatorIntake.js";
import { firstRunAlone } from "./intake/firstRunAlone.js";
import { JobLocks } from "./intake/jobLocks.js";
import { RequestJobs } from "./intake/requestJobs.js";
import { RunSlots } from "./intake/runSlots.js";
import {
  type ResolvedCoordinatorOptions,
  resolveCoordinatorOptions,
} from "./resolveCoordinatorOptions.js";
import { sessionAgentFinder } from "./run/sessionAgent.js";
import type { SessionRunnerDeps } from "./run/sessionRunner.js";
import { SessionTasks } from "./run/sessionTasks.js";
import { servedAgentsOf, wrapAgentCalls } from "./servedAgents.js";

/**
 * Options of `startCoordinator`. They are the loop's configuration too (`AgentLoopConfig`:
 * hooks, `toolExecution`, `maxTurns`, `limits`): this object goes as is to every run, which
 * adds its own executor (tool queues and approvals).
 */
export interface CoordinatorOptions
  extends Omit<AgentLoopConfig, "executor">,
    RedisConnectionOptions,
    HttpServerOptions,
    ShutdownGraceOptions {
  /**
   * The model call of the `default` agent: required unless `agents` is given.
   */
  llmCall?: LlmCall;
  toolStore: ToolStore;
  /** The `default` agent's system prompt (when `agents` is not given). @defaultValue `DEFAULTS.systemPrompt` */
  systemPrompt?: string;
  /** The `default` agent's model name, as `yiem agents` shows it. @defaultValue `DEFAULTS.model` */
  model?: string;
  /**
   * The named agents this coordinator serves (`defineAgent`, `loadAgentsFile`); every
   * coordinator of a deployment should serve the same ones. Without it, one agent named
   * `default` runs with `systemPrompt`, `llmCall` and every tool.
   */
  agents?: readonly AgentDefinition[];
  /**
   * Caps: on the model's tool calls, `maxToolCalls` per message and `maxArgumentBytes`; on a
   * request's input, `maxInputBytes`; on the transcript sent to the model in one request,
   * `maxContextBytes` (earlier tool results, then the oldest turns, then earlier answers are
   * left out, see `trimContext`).
   * @defaultValue `DEFAULTS.maxToolCalls`, `DEFAULTS.maxArgumentBytes`, `DEFAULTS.maxInputBytes`, `DEFAULTS.maxContextBytes`
   */
  limits?: ExtractToolCallsOptions & UserInputLimits & { maxContextBytes?: number };
  /**
   * Deny a tool call awaiting approval on its own after this many milliseconds (a tool's
   * `approvalTimeoutMs` wins). Default: no timeout.
   */
  approvalTimeoutMs?: number;
  /**
   * How deep agents calling agents may nest (`YIEM_MAX_AGENT_DEPTH`): a child run's call of
   * another agent past it is an error result.
   * @defaultValue `DEFAULTS.maxAgentDepth`
   */
  maxAgentDepth?: number;
  /**
   * Shared provider limits (`YIEM_MODEL_LIMITS`, `readModelLimits`): requests and tokens per
   * window for the models they cover, enforced across every coordinator through Redis before
   * each model call; a 429 pauses every coordinator's calls under the limit. Every coordinator
   * of a deployment should be given the same. See docs/RELIABILITY.md, "Provider limits".
   * @defaultValue none: model calls are not limited
   */
  modelLimits?: ModelLimits;
  /**
   * The server the model calls of agents that name no `baseURL` go to (`OPENAI_BASE_URL`):
   * what a limit's `baseURL` in `modelLimits` is matched against. Default: none (such a limit
   * covers only agents that name their server).
   */
  modelBaseURL?: string;
  /**
   * Tenants' settings (`YIEM_TENANTS`, `readTenants`): each tenant's `share` of a shared
   * provider limit while several wait, and its `budgetPerDay`; `"*"` holds for tenants not
   * named. A run's tenant is its request's `tenant` (its tree's root's). Every coordinator of
   * a deployment should be given the same. See docs/RELIABILITY.md, "Tenants".
   * @defaultValue none: every tenant has share 1 and no budget per day
   */
  tenants?: Tenants;
  /**
   * Replicas that must acknowledge each session write (`YIEM_REPLICA_ACKS`, `WAIT` after the
   * write). See docs/RELIABILITY.md, "Failover".
   * @defaultValue 0 on a single Redis, `DEFAULTS.clusterReplicaAcks` on a cluster
   */
  replicaAcks?: number;
  /**
   * How long a write waits for those acknowledgements (`YIEM_REPLICA_ACK_TIMEOUT_MS`).
   * @defaultValue `DEFAULTS.replicaAckTimeoutMs`
   */
  replicaAckTimeoutMs?: number;
  /**
   * The bytes of events a session's replay stream keeps (`YIEM_EVENT_STREAM_MAX_BYTES`):
   * past them, its oldest events are trimmed.
   * @defaultValue `DEFAULTS.eventStreamMaxBytes`
   */
  eventStreamMaxBytes?: number;
  /**
   * Sessions run at once (jobs that wait for a running session take no slot).
   * @defaultValue `DEFAULTS.coordinatorConcurrency`
   */
  concurrency?: number;
  /**
   * How long a hold on a session lasts without renewal.
   * @defaultValue `DEFAULTS.leaseMs`
   */
  leaseMs?: number;
  /**
   * BullMQ lock of a coordinator job; a coordinator silent this long is considered dead.
   * @defaultValue `DEFAULTS.lockDurationMs`
   */
  lockDurationMs?: number;
  /**
   * How often BullMQ looks for stalled coordinator jobs.
   * @defaultValue `DEFAULTS.stalledIntervalMs`
   */
  stalledIntervalMs?: number;
  /**
   * How long this process counts as alive after its last heartbeat (`YIEM_ALIVE_TTL_MS`; the
   * heartbeat runs on a thread of its own): a coordinator takes over the sessions and jobs of
   * a process silent this long (docs/RELIABILITY.md, "Failure detector"). 0: no heartbeat
   * and no detection, the locks and leases alone.
   * @defaultValue `DEFAULTS.aliveTtlMs`
   */
  aliveTtlMs?: number;
  /**
   * How often this coordinator looks for processes whose heartbeat ran out (`YIEM_ALIVE_POLL_MS`).
   * @defaultValue `DEFAULTS.alivePollMs`
   */
  alivePollMs?: number;
  /**
   * When a remote call's worker stopped answering and the call was given up (or failed as
   * stalled), how long to wait for that worker to record the call's result after all (it may
   * only have paused) before the model is told the call may have run
   * (`YIEM_STOPPED_WORKER_GRACE_MS`; 0: no wait). See `MayHaveRunDetails`.
   * @defaultValue `DEFAULTS.stoppedWorkerGraceMs`
   */
  stoppedWorkerGraceMs?: number;
  /**
   * How long a completed request job stays in the coordinator queue, in seconds, when whoever
   * added it set no `removeOnComplete` (`YIEM_REQUEST_RETENTION_S`): default 3600; a failed
   * one stays at least a day; at most 10,000 of each state. A job's own options win.
   */
  requestRetentionS?: number;
  /**
   * How long a completed tool job stays in its tool queue, in seconds
   * (`YIEM_TOOL_JOB_RETENTION_S`): default 0, removed as it completes (its result stays an
   * hour in its finished marker, which a resumed run reads); at most 10,000 per queue. Failed
   * tool jobs stay a day either way.
   * @defaultValue `DEFAULTS.toolJobRetentionS`
   */
  toolJobRetentionS?: number;
  /** @defaultValue `<hostname>-<pid>` */
  coordinatorId?: string;
  logger?: Logger;
  /** Sees every event this coordinator publishes (metrics). */
  observe?: (event: AgentEvent) => void;
  /** Bull Board basic auth and read-only mode. */
  admin?: {
    user?: string;
    password?: string;
    readOnly?: boolean;
    /** @deprecated Use `host` (the HTTP side's address, as a worker and the gateway name it); used when `host` is not given. */
    host?: string;
    /** `/healthz` fails once the event loop has been silent this long (see `startAdminServer`). */
    healthStallMs?: number;
  };
}

/** `CoordinatorOptions` with the catalogue's defaults applied, once (`resolveCoordinatorOptions`). */
type ResolvedOptions = ResolvedCoordinatorOptions<CoordinatorOptions>;

/** A running coordinator. */
export interface CoordinatorHandle {
  coordinatorId: string;
  /** Tool queues, the coordinator queue and the decisions queue, for dashboards. */
  queues(): Queue[];
  /** Sessions held right now. */
  heldSessions(): number;
  /**
   * Whether this coordinator can take work: Redis answers a PING and the coordinator queue's
   * counts can be read, within 1 s (see `checkReadiness`). Never throws.
   */
  readiness(): Promise<Readiness>;
  /** The HTTP server's base URL when `port` was given. */
  url?: string;
  /**
   * Stops taking sessions, lets the held ones finish for up to `graceMs` (default the
   * `shutdownGraceMs` option), hands the rest over to other coordinators, then closes every
   * connection.
   */
  close(graceMs?: number): Promise<void>;
}

/** Finished jobs of each state a queue keeps at most when their sender set no retention. */
const RETAINED_JOBS = 10_000;

/** Failed jobs are kept at least this long (seconds): what `YiemClient` gives its own. */
const MIN_FAILED_RETENTION_S = 24 * 3600;

/**
 * The retention of finished jobs whose sender set none (BullMQ applies a worker's
 * `removeOnComplete` / `removeOnFail` only to jobs without their own): completed ones for
 * `requestRetentionS`, failed ones at least a day.
 */
function retentionOf(options: ResolvedOptions) {
  const age = options.requestRetentionS;
  return {
    removeOnComplete: { age, count: RETAINED_JOBS },
    removeOnFail: { age: Math.max(age, MIN_FAILED_RETENTION_S), count: RETAINED_JOBS },
  };
}

/**
 * With `YIEM_ALLOW_WRITE_TOOL=1`: registers `writeTool` and the tools written so far, and
 * returns the sync that picks up tools written elsewhere before each LLM call.
 */
async function enableWrittenTools(
  options: CoordinatorOptions,
  command: RedisClient,
  keys: ClusterKeys,
) {
  if (!isWriteToolAllowed()) return undefined;
  const store = options.toolStore;
  const written = createWrittenToolsSync({ redis: command, prefix: keys.prefix, store });
  registerTool(
    store,
    createWriteTool({ redis: command, prefix: keys.prefix, store, allowed: true }),
  );
  await written.sync();
  return written;
}

/**
 * Aborts the current run of a session this coordinator holds, and carries the abort to a run
 * nobody may be holding (`onAbort`: parked for approval, or its holder gone).
 */
function abortSession(
  tasks: SessionTasks,
  log: Logger,
  sessionId: string,
  onAbort: (sessionId: string) => Promise<void>,
): void {
  const controller = tasks.held.get(sessionId)?.controller;
  if (controller) {
    log.info({ sessionId }, "run aborted");
    controller.abort();
  }
  void onAbort(sessionId);
}

/** The longest a started coordinator's first run goes alone (`firstRunAlone`). */
const FIRST_RUN_ALONE_MS = 1000;

/** How often a coordinator's open waits read their responses, in case an announcement was missed. */
const ANSWER_RECHECK_MS = 15_000;

/**
 * The coordinator's waits for the responses of the jobs it holds: answered by its own runs
 * (`settle`) or by another coordinator's (the responses channel), read from the session store.
 */
function answerWaits(store: SessionStore, log: Logger): ResponseWaits {
  return new ResponseWaits({
    read: (inputs) =>
      store.readAnswers(
        inputs.map(({ requestId, sessionId }) => ({ requestId, sessionId: sessionId ?? "" })),
      ),
    recheckMs: ANSWER_RECHECK_MS,
    onReadError: (err) =>
      log.debug({ err: (err as Error).message }, "could not read responses; retrying later"),
  });
}

/** A coordinator's runtime: its handle, and the cluster-wide counts its `/metrics` reads. */
interface RuntimeHandle extends CoordinatorHandle {
  readClusterCounts(): Promise<ClusterRunCounts>;
  /** Runs waiting for their turn under a shared limit, their slots lent (`Slot.lend`). */
  runsWaitingAtLimit(): number;
  /** Whether runs waited on the coordinator queue as it began taking work (`httpSideMayStart`). */
  runsWaitedAtStart: boolean;
}

/** What the HTTP side feeds from the runtime: its metrics' hooks. */
interface RuntimeHooks {
  /** Told how many tools live workers announce with different definitions. */
  onToolConflicts?: (count: number) => void;
  /** Told each wait, 429 and admitted call under a shared provider limit. */
  limitObserver?: ProviderLimitObserver;
  /**
   * Awaited once the connections and announcements are up, before anything takes work (the
   * failure detector, the queues' workers). A rejection stops the start: what was opened is
   * closed and the rejection is thrown.
   */
  beforeTakingWork?: () => Promise<void>;
}

/** What `/readyz` says while the coordinator is still connecting to Redis. */
const STARTING: Readiness = { ready: false, reason: "starting: connecting to redis" };

/**
 * Starts a coordinator (see `startCoordinatorRuntime` below for what it does) and, when
 * `port` is given, its HTTP side: Bull Board at `/admin/queues` with every queue, `/healthz`,
 * `/readyz` and Prometheus `/metrics` (tool calls by tool and outcome, durations, queue depths,
 * LLM latency, process metrics). The port is checked before anything starts, so a port in
 * use fails the start (`PortInUseError`) at once, before the coordinator takes any work; the
 * HTTP side then starts beside the Redis connection.
 *
 * @example
 * const coordinator = await startCoordinator({ redis: "redis://127.0.0.1:6379", llmCall, toolStore, port: 3000 });
 * process.on("SIGTERM", () => coordinator.close());
 */
export async function startCoordinator(given: CoordinatorOptions): Promise<CoordinatorHandle> {
  const options = resolveCoordinatorOptions(given); // the defaults, applied once
  resolveOutputSpec(options); // a malformed output option fails the start, not every run
  if (options.modelLimits) checkModelLimits(options.modelLimits, "modelLimits");
  if (options.tenants) checkTenants(options.tenants, "tenants");
  if (options.port === undefined) return startCoordinatorRuntime(options);
  // Before anything starts: half-set credentials, then a taken port (checked on this thread,
  // so at once, even while Redis is still away).
  const credentials = checkAdminCredentials(options.admin?.user, options.admin?.password);
  const portChecked = checkPortFree(
    options.port,
    chooseAdminHost(options.host, credentials !== undefined),
  );
  const metrics = createCoordinatorMetrics({
    isRegistered: (n) => options.toolStore.tools.has(n),
    prices: options.prices,
  });
  const observe = (event: AgentEvent) => {
    metrics.observe(event);
    options.observe?.(event);
  };
  // The HTTP side starts once the runtime's first run is done when runs waited as it began
  // taking work, else at once (`httpSideMayStart`): a replacement's first run has the main
  // thread to itself. A port in use fails the start before any session is taken
  // (`beforeTakingWork`); a front door that fails later closes the runtime (below).
  let runtime: CoordinatorHandle | undefined;
  let admin: AdminServerHandle | undefined;
  let adminFailure: { err: unknown } | undefined;
  let tookWork = false;
  const starting = startCoordinatorRuntime(
    {
      ...options,
      agents: wrapAgentCalls(options, (call, agent) => metrics.timeLlmCall(call, agent.name)),
      observe,
    },
    {
      onToolConflicts: (count) => metrics.setToolDefinitionConflicts(count),
      limitObserver: metrics.providerLimits,
      beforeTakingWork: async () => {
        await portChecked;
        if (adminFailure) throw adminFailure.err;
        tookWork = true;
      },
    },
  );
  const adminStarting = portChecked
    .then(() => httpSideMayStart(starting))
    .then(() =>
      startAdminServer({
        port: options.port as number,
        queues: () => runtime?.queues() ?? [],
        metrics,
        health: () =>
          runtime
            ? { coordinatorId: runtime.coordinatorId, heldSessions: runtime.heldSessions() }
            : { starting: true },
        readiness: () => runtime?.readiness() ?? Promise.resolve(STARTING),
        adminUser: options.admin?.user,
        adminPassword: options.admin?.password,
        host: options.host,
        readOnly: options.admin?.readOnly,
        healthStallMs: options.admin?.healthStallMs,
        limits: options.http,
      }),
    );
  adminStarting.catch((err: unknown) => {
    adminFailure = { err };
  });
  starting.catch(() => undefined); // a failed listen may end the start first (below)
  try {
    // A port in use fails the start at once, even while Redis is still away; the runtime then
    // stops at `beforeTakingWork` whenever it gets there.
    runtime = await Promise.race([starting, adminStarting.then(() => starting)]);
    admin = await adminStarting;
  } catch (err) {
    await adminStarting.then((started) => started.close()).catch(() => undefined);
    // The front door failed after the runtime began taking work (its port taken in the
    // moment after the check): the runtime hands its sessions over and closes.
    if (tookWork) await starting.then((started) => started.close(0)).catch(() => undefined);
    throw err;
  }
  const { readClusterCounts, runsWaitingAtLimit, runsWaitedAtStart, ...handle } =
    runtime as RuntimeHandle;
  void runsWaitedAtStart; // the HTTP side's start read it; the handle does not carry it
  metrics.setRunSource({
    heldSessions: handle.heldSessions,
    readClusterCounts,
    runsWaitingAtLimit,
  });
  const started = { runtime, admin };
  return {
    ...handle,
    url: started.admin.url,
    async close(graceMs) {
      await started.runtime.close(graceMs);
      await started.admin.close();
    },
  };
}

/**
 * The coordinator itself: takes requests from the coordinator queue (any BullMQ client may
 * add them; see `CoordinatorJobData`) and approval decisions from the decisions queue
 * (`DecisionJobData`), holds each session it works on with a renewed, fenced
 * lease, runs the agent loop and the LLM calls, runs sequential batches in this process and
 * sends parallel batches to the tool queues, publishes every event, and completes each
 * request's job with the response that answered it.
 *
 * @example
 * const coordinator = await startCoordinator({ redis: "redis://127.0.0.1:6379", llmCall, toolStore });
 * process.on("SIGTERM", () => coordinator.close());
 */
async function startCoordinatorRuntime(
  options: ResolvedOptions,
  hooks: RuntimeHooks = {},
): Promise<RuntimeHandle> {
  const served = servedAgentsOf(options);
  new AgentRegistry(served); // bad definitions fail the start, before anything starts
  const runtime = startProcessRuntime({ ...options, id: options.coordinatorId });
  const { keys, command, log, watch, id: coordinatorId } = runtime;
  const observer = hooks.limitObserver;
  const limited = limitAgentCalls(served, options.modelLimits, {
    ...{ command, keys, log, coordinatorId, observer, tenants: options.tenants },
    ...(options.modelBaseURL ? { defaultBaseURL: options.modelBaseURL } : {}),
  });
  await announceModelLimits(limited.limits, { command, keys, log });
  const registry = new AgentRegistry(limited.agents);
  const ctx = buildCoordinatorContext(options, runtime);
  const stores = openStores(ctx);
  const answers = answerWaits(stores.session, log);
  const slots = new RunSlots(options.concurrency);
  const coordinatorQueue = new Queue(keys.coordinatorQueue, {
    connection: command,
    prefix: keys.bullPrefix,
  });
  const resume = (sessionId: string) => tasks.ensureRunning(sessionId);
  const decisions = decisionDepsOf(ctx, stores, resume, log);
  const abortParkedRun = (sessionId: string) =>
    abortWaitingRun(decisions, stores.session, sessionId);
  const features = runFeaturesOf(options, ctx, stores, registry, coordinatorQueue, resume, log);
  const announced = await startAnnouncedTools({
    command,
    keys,
    toolStore: options.toolStore,
    log,
    onConflicts: hooks.onToolConflicts,
  });
  // The request jobs are made once the queue's worker is up; a run closes only after that.
  let requestJobs: RequestJobs | undefined;
  const deps = await runnerDeps(options, ctx, stores.session, log, {
    fallbackCall: (registry.get(registry.names()[0] ?? "") as ServedAgent).llmCall,
    agentOf: sessionAgentFinder(registry, stores.sessionAgents, coordinatorId),
    workerOnly: (tool) => announced.workerOnly(tool),
    onRunFinished: (_sessionId, requestIds, answer) => answers.settle(requestIds, answer),
    onRunClosing: (requestIds) => answers.answering(requestIds),
    onRunCloseSent: (requestIds, answer, answerText) =>
      requestJobs?.completeAhead(requestIds, answer, answerText),
    features,
  });
  await awaitBeforeTakingWork(hooks, () =>
    closeBeforeWork(runtime, ctx, announced, coordinatorQueue),
  );
  const detector = startFailureDetector({
    ...{ command, keys, log, ttlMs: options.aliveTtlMs, pollMs: options.alivePollMs },
    queues: () => queuesOfTheCluster(ctx),
    maxStalledCount: runtime.workerOptions.maxStalledCount ?? 1,
    onDeaths: () => tasks.checkWatchedNow(),
    ownLife: runtime.lifeId,
    ownBeatRefusedAt: () => runtime.alive.lastRefusedAt(),
  });
  const tasks = new SessionTasks({
    ...{ deps, slots, answers, coordinatorId, log, abortParkedRun },
    token: () => runtime.token(coordinatorId),
    deaths: detector,
  });
  await subscribeToChannels(runtime, tasks, answers, abortParkedRun, announced);
  await openToolQueues([...options.toolStore.tools.values()], ctx, log);
  const { worker, workerSettings } = await startCoordinatorQueueWorker(options, runtime);
  const locks = new JobLocks(worker, runtime.lockDurationMs, log);
  const requests = new RequestJobs({
    worker,
    store: stores.session,
    tasks,
    answers,
    locks,
    limits: options.limits ?? {},
    log,
    sessions: new RequestSessions(command, keys, ctx.acks),
    agents: {
      known: registry.names(),
      sessions: stores.sessionAgents,
      recorded: (sessionId, requestId) => stores.session.isRecorded(sessionId, requestId),
    },
    features,
    keys,
  });
  requestJobs = requests;
  const announcer = await startAgentAnnouncer({ command, keys, coordinatorId, registry, log });
  const approvalServices = startApprovalServices({
    ...{ connection: command, keys, decisions, log },
    ...{ worker: workerSettings, leaseMs: deps.leaseMs },
    stampWorker: (w) => runtime.stampWorker(w),
  });
  tasks.startWatching(Math.max(200, Math.floor(deps.leaseMs / 2)));
  const runsWaitedAtStart = await runsWaitOn(coordinatorQueue);
  const intake = startIntake({
    ...{ worker, slots, log, token: () => runtime.token() },
    handle: (j, t, s) => requests.handle(j, t, s),
    afterFirstJob: () => firstRunAlone(FIRST_RUN_ALONE_MS),
    jobsLeft: () => worker.jobsLeft,
  });
  log.info(
    { coordinatorId, lifeId: runtime.lifeId, agents: registry.names() },
    "coordinator started",
  );
  const parts: RuntimeParts = {
    ...{ ctx, worker, intake, tasks, requests, answers, locks, coordinatorQueue, log, watch },
    ...{ subscriber: runtime.subscriber, approvalServices, announced, announcer },
    ...{ detector, alive: runtime.alive },
  };
  return {
    coordinatorId,
    heldSessions: () => tasks.held.size,
    runsWaitingAtLimit: () => slots.lentNow(),
    runsWaitedAtStart,
    readClusterCounts: () => readClusterRunCounts(command, keys),
    readiness: () => checkReadiness({ command, queue: coordinatorQueue, watch }),
    queues: () => [coordinatorQueue, approvalServices.decisionsQueue, ...ctx.readyQueues],
    close: (graceMs = options.shutdownGraceMs) => closeCoordinator(parts, graceMs),
  };
}

/** Waits on `hooks.beforeTakingWork`; when it rejects, runs `undo`, then throws the rejection. */
async function awaitBeforeTakingWork(
  hooks: RuntimeHooks,
  undo: () => Promise<void>,
): Promise<void> {
  try {
    await hooks.beforeTakingWork?.();
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
}

/** Closes what a start opened before taking work: announcements, connections, the heartbeat. */
async function closeBeforeWork(
  runtime: ProcessRuntime,
  ctx: CoordinatorContext,
  announced: AnnouncedTools,
  coordinatorQueue: Queue,
): Promise<void> {
  announced.stop();
  runtime.watch.stop();
  runtime.subscriber.disconnect();
  await ctx.waiter.close();
  await coordinatorQueue.close();
  await runtime.alive.stop();
  await runtime.command.quit().catch(() => undefined);
}

/**
 * The coordinator queue's worker, which fetches jobs only when the intake asks (no processor),
 * with the settings the decisions queue's worker shares.
 */
async function startCoordinatorQueueWorker(options: ResolvedOptions, runtime: ProcessRuntime) {
  // Jobs added without retention would stay forever: the coordinator sets it on finishing.
  const workerSettings = { ...runtime.workerOptions, ...retentionOf(options) };
  const worker = new SafeTakeWorker(runtime.keys.coordinatorQueue, undefined, {
    ...workerSettings,
    drainDelay: 1, // an idle fetch blocks at most 1 s, so closing is prompt
  });
  worker.takesLean = true; // the queue is plain: no pause, no global concurrency or rate limit
  worker.claimsOnTake = REQUEST_SESSION_FIELD; // a job naming no session gets one as it is taken
  runtime.logWorkerErrors(worker, "coordinator queue error");
  await worker.waitUntilReady();
  await worker.startStalledCheckTimer();
  return { worker, workerSettings };
}

/**
 * Every queue whose jobs a process may hold (what the failure detector looks through): the
 * coordinator queue, the decisions queue, and every shard of the tool queues opened here or
 * served by a worker that announces itself.
 */
async function queuesOfTheCluster(ctx: CoordinatorContext): Promise<string[]> {
  const workers = await listWorkers(ctx.command, ctx.keys).catch(() => []);
  const served = workers.flatMap((worker) => worker.queues.flatMap((q) => ctx.keys.toolQueues(q)));
  const { coordinatorQueue, decisionsQueue } = ctx.keys;
  return [...new Set([coordinatorQueue, decisionsQueue, ...ctx.toolQueues.keys(), ...served])];
}

/** The stores of a coordinator's state in Redis. */
interface Stores {
  session: SessionStore;
  approvals: ApprovalStore;
  childRuns: ChildRunStore;
  sessionAgents: SessionAgents;
}

function openStores(ctx: CoordinatorContext): Stores {
  const { command, keys, acks } = ctx;
  return {
    session: openSessionStore(ctx),
    approvals: new ApprovalStore(command, keys, acks, ctx.streamCaps),
    childRuns: new ChildRunStore(command, keys, acks, ctx.streamCaps),
    sessionAgents: new SessionAgents(command, keys, acks),
  };
}

/**
 * The run features this coordinator runs sessions with, in the order their hooks run: the
 * composition root is the one place that names them (see `RunFeature`).
 */
function runFeaturesOf(
  options: ResolvedOptions,
  ctx: CoordinatorContext,
  stores: Stores,
  registry: AgentRegistry,
  coordinatorQueue: Queue,
  resume: (sessionId: string) => Promise<void>,
  log: Logger,
): RunFeature[] {
  const { command, keys } = ctx;
  return [
    approvalsFeature({ approvals: stores.approvals, approvalTimeoutMs: options.approvalTimeoutMs }),
    handoffsFeature({ store: new HandoffStore(command, keys, ctx.acks, ctx.streamCaps) }),
    childRunsFeature({
      store: stores.childRuns,
      callsAgents: registry.names().some((name) => registry.calleesOf(name).length > 0),
      maxDepth: options.maxAgentDepth,
      submit: async (data, jobId) => {
        await addJobLean(coordinatorQueue, "agent", data, { jobId });
      },
      resume,
      command,
      keys,
      streamCaps: ctx.streamCaps,
      log,
    }),
    budgetsFeature({ command, keys }),
    tenantsFeature({
      command,
      keys,
      leaseMs: options.leaseMs,
      ...(options.tenants ? { tenants: options.tenants } : {}),
    }),
  ];
}

/** What recording approval decisions needs, with the child runs an abort reaches. */
function decisionDepsOf(
  ctx: CoordinatorContext,
  stores: Stores,
  resume: (sessionId: string) => Promise<void>,
  log: Logger,
): DecisionDeps {
  const { command, keys } = ctx;
  return {
    approvals: stores.approvals,
    resume,
    log,
    children: {
      waiting: (sessionId) => stores.childRuns.waiting(sessionId),
      abort: async (childSessionId) => {
        await stores.childRuns.abortChildRun(childSessionId);
        const message: ControlMessage = { type: "abort", sessionId: childSessionId };
        await command.publish(keys.controlChannel, JSON.stringify(message));
      },
    },
  };
}

/** What a running coordinator is made of (for closing it in order). */
interface RuntimeParts {
  ctx: CoordinatorContext;
  worker: Worker;
  intake: Intake;
  tasks: SessionTasks;
  requests: RequestJobs;
  answers: ResponseWaits;
  locks: JobLocks;
  subscriber: RedisClient;
  coordinatorQueue: Queue;
  /** The decisions queue, its worker and the approval sweeps. */
  approvalServices: ApprovalServices;
  log: Logger;
  watch: RedisWatch;
  announced: AnnouncedTools;
  announcer: AgentAnnouncer;
  detector: FailureDetector;
  /** The heartbeat: stopped last, once nothing is held. */
  alive: AliveBeat;
}

/** What `runnerDeps` takes from the rest of the start-up. */
type RunnerParts = Pick<
  SessionRunnerDeps,
  "agentOf" | "workerOnly" | "onRunFinished" | "onRunClosing" | "onRunCloseSent" | "features"
> & { fallbackCall: LlmCall };

/** What every session this coordinator runs gets from it (built once, read-only after). */
async function runnerDeps(
  options: ResolvedOptions,
  ctx: CoordinatorContext,
  store: SessionStore,
  log: Logger,
  parts: RunnerParts,
): Promise<SessionRunnerDeps> {
  const { command, keys } = ctx;
  const written = await enableWrittenTools(options, command, keys);
  const { fallbackCall, ...rest } = parts;
  return {
    store,
    streamCaps: ctx.streamCaps,
    command,
    keys,
    leaseMs: options.leaseMs,
    llmCall: fallbackCall, // every run takes its agent's (agentOf)
    toolStore: options.toolStore,
    systemPrompt: options.systemPrompt,
    config: options,
    queueFor: toolQueueFactory(ctx),
    waiter: ctx.waiter,
    toolJobRetentionS: options.toolJobRetentionS,
    log,
    observe: options.observe,
    syncWrittenTools: written ? () => written.sync() : undefined,
    ...rest,
  };
}

/**
 * Subscribes to the control channel (aborts; a worker's changed tools, read at once) and the
 * responses channel (answers to held jobs) on the process's subscriber connection.
 */
async function subscribeToChannels(
  runtime: ProcessRuntime,
  tasks: SessionTasks,
  answers: ResponseWaits,
  onAbort: (sessionId: string) => Promise<void>,
  announced: AnnouncedTools,
): Promise<void> {
  await runtime.listenForControl({
    onAbort: (sessionId) => abortSession(tasks, runtime.log, sessionId, onAbort),
    onToolsChanged: () => void announced.refresh(),
  });
  // A worker that said its tools changed before this subscription was missed: read again.
  await announced.refresh();
  await answers.listen(runtime.subscriber, runtime.keys.responsesChannel);
}

/**
 * Stops fetching, lets held sessions finish for up to `graceMs` and hands the rest over,
 * hands the jobs still waiting for answers back to the queue, then closes every connection.
 */
async function closeCoordinator(parts: RuntimeParts, graceMs: number): Promise<void> {
  const { ctx, log } = parts;
  parts.announced.stop();
  parts.detector.stop();
  await parts.approvalServices.stop(); // lets a decision in progress finish (it may resume a run)
  await parts.intake.stop();
  await parts.tasks.close(graceMs);
  await parts.requests.close();
  parts.locks.stop();
  parts.answers.close();
  await parts.worker.close();
  parts.watch.stop();
  await parts.announcer.stop();
  parts.subscriber.disconnect();
  await ctx.waiter.close();
  await Promise.all(
    [parts.coordinatorQueue, parts.approvalServices.decisionsQueue, ...ctx.readyQueues].map((q) =>
      q.close(),
    ),
  );
  await parts.alive.stop();
  await ctx.command.quit().catch(() => undefined);
  log.info("coordinator stopped");
}
