import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { DelayedError, type Job, UnrecoverableError, type Worker } from "bullmq";
import type { Logger } from "../ops/logger.js";
import { type ProcessRuntime, processIdOf, startProcessRuntime } from "../ops/processRuntime.js";
import { markProcessWarm } from "../ops/processWarm.js";
import { logToolError } from "../ops/toolErrorLog.js";
import { createMayHaveRunResult } from "../protocol/mayHaveRun.js";
import { ABORTED_JOB_REASON, type ToolJobData, type ToolJobResult } from "../protocol/toolJobs.js";
import { isLimitedTool, limitedToolQueues, remoteQueueOf } from "../protocol/toolQueues.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { retryTransient } from "../redis/retryTransient.js";
import type { HttpServerOptions, RedisConnectionOptions } from "../settings/optionShapes.js";
import { publishEvent, streamCaps } from "../state/eventBus.js";
import { parseToolDone, type ToolDone } from "../state/toolDoneMarkers.js";
import { syncToolLimits } from "../state/toolLimits.js";
import { announceWorker, WORKER_TTL_MS, withdrawWorker } from "../state/workerRegistry.js";
import { executePreparedToolCall } from "../tools/executePreparedToolCall.js";
import { prepareToolArguments } from "../tools/prepareToolCall.js";
import { createErrorToolResult } from "../tools/toolResults.js";
import type { ToolStore } from "../tools/toolStore.js";
import { extractTraceContext, inSpan, markSpanError, SpanKind } from "../tracing/spans.js";
import type { ExecutedOutcome, PreparedToolCall } from "../types/index.js";
import {
  createWrittenToolsSync,
  isWriteToolAllowed,
  type WrittenToolsSync,
} from "../writtenTools/index.js";
import { EagerWorker } from "./eagerWorker.js";
import {
  announceJobEnd,
  completeWithEnd,
  endRecordOf,
  markerTtlS,
  recordJobEnd,
} from "./jobEnds.js";
import {
  type ResolvedToolWorkerOptions,
  resolveToolWorkerOptions,
} from "./resolveToolWorkerOptions.js";
import { createServedQueues, type ServedQueues } from "./servedQueues.js";
import { createToolAnnouncement } from "./toolAnnouncement.js";
import { startWorkerHttp, type WorkerReadiness } from "./workerHttp.js";
import { createWorkerMetrics, measureToolCall, type WorkerMetrics } from "./workerMetrics.js";

/** Options of `startToolWorker`. */
export interface ToolWorkerOptions extends RedisConnectionOptions, HttpServerOptions {
  toolStore: ToolStore;
  /**
   * Tool queue names to serve.
   * @defaultValue `DEFAULTS.queues`
   */
  queues?: string[];
  /**
   * Calls run at once, per tool queue (shared out over its shards).
   * @defaultValue `DEFAULTS.workerConcurrency`
   */
  concurrency?: number;
  /**
   * Calls one take moves off a queue together, at most (and no more than the free slots): a
   * model turn's parallel calls go to one worker in one Redis call; `1` spreads them over idle
   * workers.
   * @defaultValue `DEFAULTS.workerTakeAtOnce`
   */
  takeAtOnce?: number;
  /** @defaultValue `<hostname>-<pid>` */
  workerId?: string;
  /**
   * The bytes of events a session's replay stream keeps (`YIEM_EVENT_STREAM_MAX_BYTES`;
   * set it as the coordinators do): past them, its oldest events are trimmed.
   * @defaultValue `DEFAULTS.eventStreamMaxBytes`
   */
  eventStreamMaxBytes?: number;
  /**
   * BullMQ job lock; a worker silent for this long is considered dead.
   * @defaultValue `DEFAULTS.lockDurationMs`
   */
  lockDurationMs?: number;
  /**
   * How often BullMQ looks for stalled jobs.
   * @defaultValue `DEFAULTS.stalledIntervalMs`
   */
  stalledIntervalMs?: number;
  /**
   * The job lock on the queues of limited tools (`YIEM_LIMITED_LOCK_MS`), when shorter than
   * `lockDurationMs`: default 5 s, renewed every half of it, with a stalled check as often.
   * A worker that dies mid-call holds one of the tool's few slots until its lock runs out and
   * the call's new holder has waited one more lock for its result, so this bounds how long a
   * crash blocks every call of that tool in the cluster (see `lockOfQueue`).
   * @defaultValue `DEFAULTS.limitedLockDurationMs`
   */
  limitedLockDurationMs?: number;
  /**
   * How long this worker counts as alive after its last heartbeat (`YIEM_ALIVE_TTL_MS`; the
   * heartbeat runs on a thread of its own): a coordinator hands out again the calls of a
   * worker silent this long (docs/RELIABILITY.md, "Failure detector"). 0: no heartbeat.
   * @defaultValue `DEFAULTS.aliveTtlMs`
   */
  aliveTtlMs?: number;
  logger?: Logger;
}

/** `ToolWorkerOptions` with the catalogue's defaults applied, once (`resolveToolWorkerOptions`). */
type ResolvedOptions = ResolvedToolWorkerOptions<ToolWorkerOptions>;

/** A running tool worker. */
export interface ToolWorkerHandle {
  workerId: string;
  /** Calls running now. */
  running(): number;
  /** The HTTP side's base URL when `port` was given. */
  url?: string;
  /** Stops taking calls, waits for the running ones to finish, withdraws the announcement. */
  close(): Promise<void>;
}

/** A queue's BullMQ lock and stalled-check period, and whether it is a limited tool's queue. */
interface QueueLock {
  lockMs: number;
  stalledIntervalMs: number;
  limited: boolean;
}

/**
 * The lock of tool queue `queue`: the process's (`ctx.runtime`), except on the
 * queue of a limited tool, where a job's lock is at most `limitedLockDurationMs` (5 s) and
 * stalled jobs are looked for every half lock. There a dead worker's call holds a slot the
 * tool's other calls wait for, cluster-wide; elsewhere it holds only itself. The cost: a
 * limited tool whose worker's event loop is blocked for more than half that lock loses its
 * lock, and the call is handed out again (within its `retries`; with none, its new holder
 * waits one lock for the first one's result).
 */
function lockOfQueue(ctx: WorkerContext, queue: string): QueueLock {
  const { options, runtime } = ctx;
  const lockMs = runtime.lockDurationMs;
  const { stalledIntervalMs } = options;
  if (!limitedToolQueues(options.toolStore.tools.values()).has(queue)) {
    return { lockMs, stalledIntervalMs, limited: false };
  }
  const limitedMs = Math.min(lockMs, options.limitedLockDurationMs);
  return {
    lockMs: limitedMs,
    stalledIntervalMs: Math.min(stalledIntervalMs, Math.max(1, Math.floor(limitedMs / 2))),
    limited: true,
  };
}

interface WorkerContext {
  /** True from SIGTERM's `close` on: announced, so clients see a drain, not a stop. */
  draining: boolean;
  options: ResolvedOptions;
  runtime: ProcessRuntime;
  workerId: string;
  keys: ClusterKeys;
  command: RedisClient;
  active: Map<string, { sessionId: string; worker: Worker }>;
  log: Logger;
  /** Picks up tools written through writeTool (when allowed). */
  written?: WrittenToolsSync;
  /** Counts and times the calls (when the worker serves `/metrics`). */
  metrics?: WorkerMetrics;
}

function jobResult(
  ctx: WorkerContext,
  started: number,
  outcome: Omit<ToolJobResult, "workerId" | "durationMs">,
): ToolJobResult {
  return { ...outcome, workerId: ctx.workerId, durationMs: Date.now() - started };
}

/** Runs a call in a `yiem.tool_execute` span, a child of the coordinator's span carried in the job. */
function executeInSpan(
  ctx: WorkerContext,
  data: ToolJobData,
  execute: () => Promise<ExecutedOutcome>,
): Promise<ExecutedOutcome> {
  const attributes = {
    "yiem.tool": data.toolName,
    "yiem.tool_call_id": data.toolCallId,
    "yiem.session_id": data.sessionId,
    "yiem.worker_id": ctx.workerId,
  };
  const parent = extractTraceContext(data.trace);
  return inSpan(
    "yiem.tool_execute",
    { kind: SpanKind.CONSUMER, parent, attributes },
    async (span) => {
      const outcome = await execute();
      if (outcome.isError) markSpanError(span, "the call's result is an error");
      return outcome;
    },
  );
}

/** Whether job `job` was handed out again after its worker stopped more often than its tool's `retries` allow. */
function retriesSpent(job: Job<ToolJobData>): boolean {
  return job.attemptsStarted - (job.data.handoffs ?? 0) > job.data.retries + 1;
}

/** How many times a job is handed back before a worker without its tool answers it. */
const MAX_HANDOFFS = 30;

/**
 * A job of a tool this worker lacks, while other workers of the queue may have it (worker-only
 * tools need not be on every worker serving a queue): it goes back to the queue for a short,
 * jittered delay so another worker takes it, counted in `handoffs` so it costs no retry. After
 * `MAX_HANDOFFS` the job is this worker's, and `runToolJob` answers "not available".
 */
async function handOffMissingTool(job: Job<ToolJobData>, token: string | undefined): Promise<void> {
  const handoffs = job.data.handoffs ?? 0;
  if (!token || handoffs >= MAX_HANDOFFS) return;
  await job.updateData({ ...job.data, handoffs: handoffs + 1 });
  await job.moveToDelayed(Date.now() + 50 + Math.floor(Math.random() * 150), token);
  throw new DelayedError();
}

/** Runs one tool job. Never throws: a missing tool, spent retries and tool failures are results. */
async function runToolJob(
  ctx: WorkerContext,
  job: Job<ToolJobData>,
  signal?: AbortSignal,
): Promise<ToolJobResult> {
  const started = Date.now();
  const data = job.data;
  await ctx.written?.sync();
  const tool = ctx.options.toolStore.tools.get(data.toolName);
  if (!tool) {
    const message = `Tool "${data.toolName}" is not available on worker ${ctx.workerId} (it has: ${[...ctx.options.toolStore.tools.keys()].join(", ")})`;
    return jobResult(ctx, started, { result: createErrorToolResult(message), isError: true });
  }
  if (retriesSpent(job)) {
    const reason = `stopped ${job.attemptsStarted - 1} times, retries: ${data.retries}`;
    const result = createMayHaveRunResult(data.toolName, reason);
    return jobResult(ctx, started, { result, isError: true });
  }
  const args = data.prepareOnWorker ? prepareToolArguments(tool, data.args) : data.args;
  if (typeof args === "string") {
    return jobResult(ctx, started, { result: createErrorToolResult(args), isError: true });
  }
  const prep: PreparedToolCall = {
    kind: "prepared",
    tool,
    toolCall: {
      type: "function",
      id: data.toolCallId,
      name: data.toolName,
      arguments: data.args,
    },
    args,
  };
  const origin = { sessionId: data.sessionId, runId: data.runId, workerId: ctx.workerId };
  const caps = streamCaps(ctx.options.eventStreamMaxBytes);
  // A failover must not turn a running call into a failed one: events wait it out.
  const emit = (event: Parameters<typeof publishEvent>[3]) =>
    retryTransient(() => publishEvent(ctx.command, ctx.keys, origin, event, caps)).then(
      () => undefined,
    );
  const callOrigin = {
    tool: data.toolName,
    toolCallId: data.toolCallId,
    sessionId: data.sessionId,
    runId: data.runId,
  };
  const onToolError = (err: unknown) => logToolError(ctx.log, callOrigin, err);
  const outcome = await executeInSpan(ctx, data, () =>
    executePreparedToolCall(prep, signal, emit, onToolError),
  );
  ctx.log.debug(
    { jobId: job.id, tool: data.toolName, isError: outcome.isError },
    "tool call finished",
  );
  markProcessWarm(); // a bundled worker keeps its compiled code from here on
  return jobResult(ctx, started, outcome);
}

/**
 * Records the "may have run" result (`createMayHaveRunResult`) of a job whose retries are
 * spent, unless an earlier attempt recorded its own result meanwhile (a stopped worker that
 * woke up): then that result is the job's. Awaited, so a job never completes as "may have
 * run" over a result already recorded. Written only where no marker is (`NX`); the earlier
 * worker's own marker write replaces it, which is what the coordinator's grace reads
 * (`awaitLateResult`).
 */
async function recordGivingUp(
  ctx: WorkerContext,
  job: Job<ToolJobData>,
  givingUp: ToolJobResult,
): Promise<ToolJobResult> {
  const key = ctx.keys.toolDone(job.queueName, job.id ?? "");
  const text = JSON.stringify(givingUp);
  const set = await retryTransient(() => ctx.command.set(key, text, "EX", markerTtlS(true), "NX"));
  const earlier =
    set === "OK" ? undefined : parseToolDone(await retryTransient(() => ctx.command.get(key)));
  if (earlier?.finished && earlier.result)
    return completeWithEarlierResult(ctx, job, earlier.result);
  completeWithEnd(ctx, job, givingUp, true);
  return givingUp;
}

/**
 * Whether a job BullMQ hands out again already finished once. Only a re-run (a later
 * attempt) reads Redis: a fresh job costs no round trip (a coordinator that dispatches a call
 * again reads the marker itself first, see `remoteExecutor.ts`). A worker that died mid-call
 * left no marker, so the stalled checker's re-run goes ahead.
 */
async function readEarlierAttempt(ctx: WorkerContext, job: Job<ToolJobData>): Promise<ToolDone> {
  if (job.attemptsStarted <= 1 && job.attemptsMade === 0) return { finished: false };
  return parseToolDone(
    await retryTransient(() => ctx.command.get(ctx.keys.toolDone(job.queueName, job.id ?? ""))),
  );
}

/**
 * For a job handed out again with its retries spent: the worker that lost it may only have
 * stopped (SIGSTOP, a long pause, an event loop blocked past its lock), not died, and finish
 * the call yet. It gets one more lock duration (`lockMs`, its queue's) to record its result, polled here; an abort
 * ends the wait. Whatever the marker says then.
 */
async function awaitEarlierAttempt(
  ctx: WorkerContext,
  job: Job<ToolJobData>,
  signal: AbortSignal | undefined,
  lockMs: number,
): Promise<ToolDone> {
  const pollMs = Math.min(1000, Math.max(50, lockMs / 8));
  const deadline = Date.now() + lockMs;
  for (;;) {
    const done = parseToolDone(
      await retryTransient(() => ctx.command.get(ctx.keys.toolDone(job.queueName, job.id ?? ""))),
    );
    if (done.finished || signal?.aborted || Date.now() >= deadline) return done;
    await sleep(pollMs);
  }
}
/**
 * Completes a job whose tool finished but whose completion never reached Redis (the lock ran
 * out during an outage or a failover, and the stalled checker handed the job out again):
 * with the result the tool gave, without running it again.
 */
function completeWithEarlierResult(
  ctx: WorkerContext,
  job: Job<ToolJobData>,
  result: ToolJobResult,
): ToolJobResult {
  ctx.log.info(
    { jobId: job.id, tool: job.data.toolName },
    "completed a tool job with its earlier result (its first completion was lost)",
  );
  completeWithEnd(ctx, job, result, true);
  return result;
}

/** Fails a re-run of a finished job for good, with the reason in the job's log too. */
async function refuseRerun(ctx: WorkerContext, job: Job<ToolJobData>): Promise<never> {
  const { toolCallId, sessionId } = job.data;
  const reason = `refused: tool call ${toolCallId} of session ${sessionId} already finished; a retry would run its side effects twice`;
  await job.log(reason).catch(() => 0);
  // The refused job is kept as long as the marker now.
  recordJobEnd(ctx, job, { kind: "failed", reason });
  ctx.log.warn({ jobId: job.id, tool: job.data.toolName }, "refused to re-run a finished tool job");
  throw new UnrecoverableError(reason);
}

/**
 * The tool queues' processor. A job handed out again after its tool finished but its
 * completion was lost completes with the stored result. A retry of a job that already
 * finished (Bull Board's retry of a completed or failed job) is refused: the job fails with a `refused: …` reason, runs no
 * tool and publishes no events, since a tool call may have side effects. A re-run after a
 * worker died mid-call still runs (see `runToolJob` for its retry limit); once its retries are
 * spent, the worker that lost the job gets one more lock duration to report its result
 * (`awaitEarlierAttempt`) before the call gets its "may have run" error result. A retry through
 * the API that resets both `attemptsStarted` and `attemptsMade` looks like a new job and runs.
 * A call whose session was aborted while it ran fails with `aborted`, without a retry.
 */
async function processToolJob(
  ctx: WorkerContext,
  job: Job<ToolJobData>,
  signal: AbortSignal | undefined,
  lock: QueueLock,
): Promise<ToolJobResult> {
  let earlier = await readEarlierAttempt(ctx, job);
  if (!earlier.finished && retriesSpent(job)) {
    earlier = await awaitEarlierAttempt(ctx, job, signal, lock.lockMs);
  }
  if (earlier.finished && earlier.result && job.attemptsMade === 0) {
    return completeWithEarlierResult(ctx, job, earlier.result);
  }
  if (earlier.finished) return refuseRerun(ctx, job);
  const result = await runToolJob(ctx, job, signal);
  if (!signal?.aborted && retriesSpent(job)) return recordGivingUp(ctx, job, result);
  if (signal?.aborted) {
    recordJobEnd(ctx, job, { kind: "failed", reason: ABORTED_JOB_REASON });
    throw new UnrecoverableError(ABORTED_JOB_REASON);
  }
  completeWithEnd(ctx, job, result, false);
  return result;
}

/**
 * Serves one BullMQ queue (one shard of a tool queue) with `concurrency` calls at once, its
 * jobs locked as `lock` says.
 */
function startQueueWorker(
  ctx: WorkerContext,
  queue: string,
  concurrency: number,
  lock: QueueLock,
): Worker {
  const worker = new EagerWorker<ToolJobData, ToolJobResult>(
    queue,
    async (job, token, signal) => {
      if (!ctx.options.toolStore.tools.has(job.data.toolName)) await handOffMissingTool(job, token);
      const jobId = job.id ?? "";
      ctx.active.set(jobId, { sessionId: job.data.sessionId, worker });
      try {
        const { toolName } = job.data;
        return await measureToolCall(ctx.metrics, toolName, signal, () =>
          processToolJob(ctx, job, signal, lock),
        );
      } catch (err) {
        // An aborted or refused job announced its end with its marker; a handed-off one has
        // not ended. Any other failure is announced with the reason BullMQ records.
        if (!(err instanceof DelayedError || err instanceof UnrecoverableError))
          announceJobEnd(ctx, job, {
            kind: "failed",
            reason: (err as Error).message ?? String(err),
          });
        throw err;
      } finally {
        ctx.active.delete(jobId);
      }
    },
    {
      ...ctx.runtime.workerOptions,
      concurrency,
      lockDuration: lock.lockMs,
      stalledInterval: lock.stalledIntervalMs,
    }, // retries are counted per tool in runToolJob
  );
  // A limited tool's queue has a global concurrency: there the finish that frees a slot takes
  // the job waiting for it. Elsewhere a finish takes nothing (6 commands fewer when the queue
  // is empty, as it mostly is; see `EagerWorker`).
  worker.fetchOnFinish = lock.limited;
  worker.takesLean = !lock.limited; // a limited queue is not plain: BullMQ takes its jobs
  worker.takeAtOnce = ctx.options.takeAtOnce;
  worker.endRecordOf = endRecordOf;
  ctx.runtime.stampWorker(worker); // its lock tokens name this worker's life
  ctx.runtime.logWorkerErrors(worker, "tool queue worker error", { queue });
  return worker;
}

/**
 * Serves every shard of tool queue `queue`; its `concurrency` is shared out over the shards
 * (rounded up), so a tool queue runs about as many calls at once however it is sharded.
 */
function startShardWorkers(ctx: WorkerContext, queue: string): Worker[] {
  const shards = ctx.keys.toolQueues(queue);
  const concurrency = Math.ceil(concurrencyOf(ctx.options) / shards.length);
  const lock = lockOfQueue(ctx, queue);
  return shards.map((name) => startQueueWorker(ctx, name, concurrency, lock));
}

/** Cancels every running call of an aborted session (its tool's signal fires). */
function cancelCallsOf(ctx: WorkerContext, sessionId: string): void {
  for (const [jobId, entry] of ctx.active) {
    if (entry.sessionId === sessionId) entry.worker.cancelJob(jobId, ABORTED_JOB_REASON);
  }
}

/**
 * Tells every coordinator, on the control channel, that this worker's announced tools changed
 * (its first announcement too), once per change: they read the registry at once, so a tool is
 * offered as soon as its worker is ready. Never throws (the periodic read catches up).
 */
function sayToolsChanged(ctx: WorkerContext): () => Promise<void> {
  const message = JSON.stringify({ type: "toolsChanged", workerId: ctx.workerId });
  return () =>
    ctx.command
      .publish(ctx.keys.controlChannel, message)
      .then(() => undefined)
      .catch(() => undefined);
}

/**
 * Announces the worker, with the definitions of its tools (`createToolAnnouncement`), now and
 * every third of the announcement's lifetime (and says when its tools changed); returns the
 * timer.
 */
async function startHeartbeat(ctx: WorkerContext, queues: () => string[]): Promise<Heartbeat> {
  const startedAt = Date.now();
  const tools = createToolAnnouncement(ctx.options.toolStore);
  const toolsChanged = sayToolsChanged(ctx);
  let saidDigests = "";
  const announce = async () => {
    const { digests, definitions } = tools.next();
    const info = {
      workerId: ctx.workerId,
      hostname: hostname(),
      pid: process.pid,
      queues: queues(),
      tools: Object.keys(digests),
      toolDigests: digests,
      concurrency: concurrencyOf(ctx.options),
      running: ctx.active.size,
      ...(ctx.draining ? { draining: true } : {}),
      startedAt,
      lastSeen: Date.now(),
    };
    try {
      const lost = await announceWorker(ctx.command, ctx.keys, info, definitions);
      tools.written(definitions.write.keys());
      tools.lost(lost);
      const said = JSON.stringify(digests);
      if (said !== saidDigests) await toolsChanged();
      saidDigests = said;
    } catch (err) {
      ctx.log.debug({ err: (err as Error).message }, "could not announce the worker; retrying");
    }
  };
  let last = announce();
  await last;
  const timer = setInterval(() => {
    last = announce();
  }, WORKER_TTL_MS / 3);
  return {
    announce: () => {
      last = announce();
      return last;
    },
    async stop() {
      clearInterval(timer);
      await last; // none lands after the withdrawal
    },
  };
}

/** The worker's announcements: one now, and the end of the periodic ones. */
interface Heartbeat {
  announce(): Promise<void>;
  stop(): Promise<void>;
}

/** `/readyz`'s answer: consuming and Redis reachable, else why not. */
function readinessOf(state: "starting" | "ready", ctx: WorkerContext | undefined): WorkerReadiness {
  if (!ctx || state === "starting") {
    return { ready: false, reason: "starting: not consuming its queues yet" };
  }
  if (ctx.draining) {
    return { ready: false, reason: `draining: finishing ${ctx.active.size} calls, taking none` };
  }
  if (!ctx.runtime.watch.reachable()) {
    return {
      ready: false,
      reason: `redis unreachable: ${ctx.runtime.watch.lastError() ?? "no connection"}`,
    };
  }
  return { ready: true };
}

/** Calls a worker runs at once, per tool queue. */
function concurrencyOf(options: ResolvedOptions): number {
  return options.concurrency;
}

/**
 * The queues a worker serves: `options.queues` (default `DEFAULTS.queues`), plus, when it serves
 * the default queue, the own queues of the limited tools it has (see `remoteQueueOf`).
 */
function queuesToServe(options: ResolvedOptions): string[] {
  const { queues } = options;
  if (!queues.includes("default")) return queues;
  const own = [...options.toolStore.tools.values()].filter((t) => !t.queue && isLimitedTool(t));
  return [...queues, ...own.map((tool) => remoteQueueOf(tool) as string)];
}

/**
 * Brings the cluster-wide limits stored on the queues of the tools this worker serves in line
 * with them (`syncToolLimits`): a tool with a `queue` when it serves that queue, any other
 * when it serves the default queue (its limited tools' own queues with it).
 */
async function syncLimitsOfServedTools(ctx: WorkerContext, queues: string[]): Promise<void> {
  const served = [...ctx.options.toolStore.tools.values()].filter((tool) =>
    queues.includes(remoteQueueOf(tool) ?? "default"),
  );
  await syncToolLimits({ connection: ctx.command, keys: ctx.keys, tools: served, log: ctx.log });
}

/**
 * Opens the workers of the queues the worker serves now (`queuesToServe`), their limits
 * synced first, and follows the tool store: a limited tool added later gets its queue served
 * (with the limited lock), a queue no tool needs any more is closed (see `ServedQueues`).
 */
async function serveQueues(ctx: WorkerContext): Promise<ServedQueues> {
  const store = ctx.options.toolStore;
  const served = await createServedQueues({
    revision: () => store.revision,
    wanted: () => queuesToServe(ctx.options),
    prepare: (queues) => syncLimitsOfServedTools(ctx, queues),
    start: (queue) => startShardWorkers(ctx, queue),
    log: ctx.log,
  });
  served.follow();
  return served;
}

/**
 * Starts a tool worker: serves the given tool queues with `concurrency` calls at once each,
 * publishes each call's partial results as events, announces itself and its tools'
 * definitions every few seconds so `client.workers()` lists it and coordinators without the
 * tools' code offer them and send their calls here (a tool added to or removed from
 * `toolStore` while it runs is announced by the next heartbeat, and the own queue of a limited
 * tool added later is served within half a second; see `ServedQueues`), and cancels a session's calls when it is aborted. With `port`,
 * serves `/healthz` and `/metrics` (calls by tool and outcome, durations, calls in flight,
 * process metrics), listening before Redis is reached: a port in use fails the start with
 * `PortInUseError` before the worker takes any call.
 *
 * @example
 * const worker = await startToolWorker({ redis: "redis://127.0.0.1:6379", toolStore });
 * process.on("SIGTERM", () => worker.close());
 */
export async function startToolWorker(given: ToolWorkerOptions): Promise<ToolWorkerHandle> {
  const options = resolveToolWorkerOptions(given); // the defaults, applied once
  const workerId = processIdOf(options.workerId); // known before Redis: the HTTP side starts first
  const metrics =
    options.port === undefined
      ? undefined
      : createWorkerMetrics({ isRegistered: (name) => options.toolStore.tools.has(name) });
  let state: "starting" | "ready" = "starting";
  let started: WorkerContext | undefined;
  const http =
    metrics &&
    (await startWorkerHttp({
      port: options.port ?? 0,
      host: options.host,
      limits: options.http,
      metrics,
      health: () => ({ workerId, running: metrics.inFlight() }),
      readiness: () => readinessOf(state, started),
    }));
  const runtime = startProcessRuntime({ ...options, id: workerId });
  const { keys, command, log, watch, subscriber } = runtime;
  const written = isWriteToolAllowed()
    ? createWrittenToolsSync({ redis: command, prefix: keys.prefix, store: options.toolStore })
    : undefined;
  await written?.sync();
  const ctx: WorkerContext = {
    draining: false,
    written,
    options,
    runtime,
    workerId,
    keys,
    command,
    active: new Map(),
    log,
    metrics,
  };
  await runtime.listenForControl({ onAbort: (sessionId) => cancelCallsOf(ctx, sessionId) });
  const served = await serveQueues(ctx);
  const heartbeat = await startHeartbeat(ctx, served.queues);
  started = ctx;
  state = "ready";
  ctx.log.info(
    { workerId, lifeId: runtime.lifeId, queues: served.queues() },
    "tool worker started",
  );
  return {
    workerId,
    running: () => ctx.active.size,
    url: http?.url,
    async close() {
      // Announced as draining while its calls finish: clients say so rather than "stopped".
      ctx.draining = true;
      await Promise.race([heartbeat.announce(), sleep(1000)]); // Redis away: drain anyway
      await served.close();
      await Promise.race([heartbeat.stop(), sleep(1000)]);
      watch.stop();
      await withdrawWorker(command, keys, workerId).catch(() => undefined);
      await runtime.alive.stop(); // no call held any more: its life may end
      subscriber.disconnect();
      await command.quit().catch(() => undefined);
      await http?.close();
      ctx.log.info({ workerId }, "tool worker stopped");
    },
  };
}
