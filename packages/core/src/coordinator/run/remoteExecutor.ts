import type { Queue } from "bullmq";
import { LeaseLostError } from "../../protocol/errors.js";
import { toolJobRetention } from "../../protocol/jobRetention.js";
import { createMayHaveRunResult } from "../../protocol/mayHaveRun.js";
import {
  ABORTED_JOB_REASON,
  type ToolJobData,
  type ToolJobResult,
  toolJobId,
} from "../../protocol/toolJobs.js";
import { classifyJobFailure } from "../../redis/bullmqErrors.js";
import { addJobLean } from "../../redis/plainJobs.js";
import { isPassingRedisError } from "../../redis/redisErrors.js";
import { retryTransient } from "../../redis/retryTransient.js";
import { DEFAULTS } from "../../settings/defaults.js";
import type { ToolDone } from "../../state/toolDoneMarkers.js";
import { executePreparedToolCall } from "../../tools/executePreparedToolCall.js";
import { ABORTED_MESSAGE } from "../../tools/prepareToolCall.js";
import { createErrorToolResult, describeError } from "../../tools/toolResults.js";
import { injectTraceContext } from "../../tracing/spans.js";
import type {
  AgentTool,
  ExecutedOutcome,
  PreparedToolCall,
  ToolExecutor,
} from "../../types/index.js";
import { isMayHaveRunValue } from "./lateResults.js";
import type { JobEnd, ResultWaiter } from "./resultWaiter.js";
import { placeToolCall, type ToolPlacement, type WorkerOnlyTool } from "./toolPlacement.js";

/** What a remote executor needs: where the run belongs and how to reach the tool queues. */
export interface RemoteExecutorOptions {
  sessionId: string;
  runId: string;
  /** The BullMQ queue of tool queue `queue` that `sessionId`'s calls go to (its shard, created on first use). */
  queueFor: (queue: string | undefined, sessionId: string) => Promise<Queue>;
  waiter: ResultWaiter;
  /**
   * Called before a call runs in this process; an outcome returned here replaces running it
   * (the cluster uses it to refuse re-running an interrupted call that is not idempotent).
   */
  beforeLocalCall?: (prep: PreparedToolCall) => Promise<ExecutedOutcome | undefined>;
  /**
   * The finished marker of job `jobId` of tool queue `queue` when call `prep` may have been
   * dispatched before (a resumed run's unanswered calls); `undefined` for calls this run
   * dispatches first.
   */
  readFinished?: (
    prep: PreparedToolCall,
    queue: string,
    jobId: string,
  ) => Promise<ToolDone | undefined>;
  /**
   * Asked right before a remote call's job is added: false when its run was aborted
   * meanwhile, and the call is then not dispatched (see `withdrawCall`). Default: always true.
   * In-process calls ask `beforeLocalCall`.
   */
  mayDispatch?: (prep: PreparedToolCall) => Promise<boolean>;
  /**
   * Says whether a tool is worker-only (announced by workers, no code here): its calls always
   * go to the workers, even in a sequential batch (`placeToolCall`). Default: none is.
   */
  workerOnly?: (tool: AgentTool) => WorkerOnlyTool | undefined;
  /** Told of an error a tool threw in this process (the coordinator logs it). */
  onToolError?: (prep: PreparedToolCall, error: unknown) => void;
  /**
   * Called right before each add of a call's job is issued, on the connection the job is added
   * on: sends the session's queued events (the call's `toolExecStart`) ahead of it, since a
   * tool job's add sends no queued event itself (`state/eventBatches.ts`). The add goes out at
   * the end of the pass, in one script call with the others issued to its queue meanwhile
   * (`addJobLean`), so behind every one of their calls' events. Default: nothing.
   */
  beforeAdd?: () => void;
  /**
   * Seconds a completed tool job stays in its queue (`YIEM_TOOL_JOB_RETENTION_S`; 0: removed
   * as it completes, its result kept by its finished marker). See `toolJobRetention`.
   * @defaultValue `DEFAULTS.toolJobRetentionS`
   */
  toolJobRetentionS?: number;
}

function errorOutcome(message: string): ExecutedOutcome {
  return { result: createErrorToolResult(message), isError: true };
}

/** States of a job no worker has taken yet (a paused queue's jobs read as `waiting`). */
const NOT_STARTED = new Set<string>(["waiting", "delayed", "prioritized", "paused"]);

/**
 * Removes a tool job only while no worker has taken it: a running job is left to its
 * worker's cancel, a finished one stays for Bull Board. A job that moves on between the
 * state read and the remove is the one remaining race.
 */
async function removeIfNotStarted(queue: Queue, jobId: string): Promise<void> {
  const state = await queue.getJobState(jobId);
  if (NOT_STARTED.has(state)) await queue.remove(jobId);
}

/**
 * The outcome of a call whose run was aborted while it waited: its job is removed if no
 * worker has taken it, unless the coordinator lost or handed over the session (the next
 * holder attaches to the job).
 */
async function abandonJob(
  queue: Queue,
  jobId: string,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome> {
  if (!(signal?.reason instanceof LeaseLostError)) {
    await removeIfNotStarted(queue, jobId).catch(() => undefined);
  }
  return errorOutcome(ABORTED_MESSAGE);
}

/**
 * The outcome of a call that may not be dispatched (its run was aborted before it was): a job
 * a previous holder of the session added for it is removed if no worker has taken it, or
 * waited for if one has (the call then gets its real result); otherwise the call gets the
 * aborted result, and no job is added.
 */
async function withdrawCall(
  options: RemoteExecutorOptions,
  prep: PreparedToolCall,
  queue: Queue,
  jobId: string,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome> {
  await removeIfNotStarted(queue, jobId).catch(() => undefined);
  if ((await queue.getJobState(jobId)) === "unknown") return errorOutcome(ABORTED_MESSAGE);
  const end = await options.waiter.waitForJobEnd(queue, jobId, async () => undefined, signal);
  return end.kind === "aborted" || end.kind === "missing"
    ? errorOutcome(ABORTED_MESSAGE)
    : outcomeOf(options, prep, queue.name, jobId, end, signal);
}

/** The outcome a worker's job result gives the call; it names the worker. */
function valueOutcome(value: ToolJobResult): ExecutedOutcome {
  const { result, isError, workerId } = value;
  return { result, isError, workerId };
}

/**
 * The outcome of a call whose worker stopped answering (given up as "may have run", or failed
 * as stalled): the stopped worker's own result when it records one within the grace
 * (`ResultWaiter.waitForLateResult`), else `mayHaveRun`, never a plain failure.
 */
async function settleStoppedCall(
  options: RemoteExecutorOptions,
  queueName: string,
  jobId: string,
  mayHaveRun: ExecutedOutcome,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome> {
  const late = await options.waiter.waitForLateResult(queueName, jobId, signal);
  return late ? valueOutcome(late) : mayHaveRun;
}

/**
 * Turns how job `jobId` ended into the call's outcome; a completed one names its worker. A
 * call whose worker stopped answering is settled by `settleStoppedCall`.
 */
async function outcomeOf(
  options: RemoteExecutorOptions,
  prep: PreparedToolCall,
  queueName: string,
  jobId: string,
  end: Exclude<JobEnd, { kind: "aborted" }>,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome> {
  const name = prep.tool.name;
  if (end.kind === "completed") {
    const outcome = valueOutcome(end.value);
    if (!isMayHaveRunValue(end.value)) return outcome;
    return settleStoppedCall(options, queueName, jobId, outcome, signal);
  }
  if (end.kind === "missing")
    return errorOutcome(`${name}: the tool job disappeared before it finished`);
  if (end.reason === ABORTED_JOB_REASON) return errorOutcome(ABORTED_MESSAGE);
  const failure = classifyJobFailure(end.reason, {
    toolName: name,
    toolCallId: prep.toolCall.id,
  });
  if (failure.stalled) {
    const mayHaveRun = { result: createMayHaveRunResult(name, end.reason), isError: true };
    return settleStoppedCall(options, queueName, jobId, mayHaveRun, signal);
  }
  return errorOutcome(`${name}: the tool job failed: ${end.reason}`);
}

/**
 * Before a call is dispatched again: a call a previous holder dispatched may have finished and
 * had its job removed since (a board "clean completed", retention trimming it), and adding the
 * job again would run the tool twice. The job's finished marker answers it instead, with the
 * result it kept; a job that ended without one (aborted, refused) and is gone gets an error
 * result. `undefined` when the call never finished, or its job is there to attach to.
 */
async function recallFinishedCall(
  options: RemoteExecutorOptions,
  prep: PreparedToolCall,
  queue: Queue,
  jobId: string,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome | undefined> {
  const done = await options.readFinished?.(prep, queue.name, jobId);
  if (!done?.finished) return undefined;
  if (done.result) {
    const outcome = valueOutcome(done.result);
    if (!isMayHaveRunValue(done.result)) return outcome;
    return settleStoppedCall(options, queue.name, jobId, outcome, signal);
  }
  if ((await queue.getJobState(jobId)) !== "unknown") return undefined;
  return errorOutcome(
    `${prep.tool.name}: the tool job ended without a result and was removed; the call is not run again`,
  );
}

/**
 * The cluster's `ToolExecutor`. Calls of a parallel batch, every call of a tool with an
 * explicit `queue` or a cluster-wide limit (`remoteQueueOf`), and every call of a worker-only
 * tool become jobs on the tool queues (`placeToolCall`); other calls (sequential batches of
 * local tools) run in this process. Job ids derive from session, run and call key, so a re-dispatch after a crash
 * attaches to the existing job, or, when that job finished and was removed since, takes the
 * result its finished marker kept (`readFinished`). A call whose worker stopped answering gets
 * that worker's own result when it records one within the grace, else a "may have run" result
 * (`MayHaveRunDetails`), never a plain failure (`settleStoppedCall`). Never throws: queue
 * errors, dead workers and aborts become error results.
 */
export function createRemoteExecutor(options: RemoteExecutorOptions): ToolExecutor {
  return {
    async execute(prep, signal, emit, context) {
      const placement = placeToolCall(prep.tool, context, options.workerOnly ?? noneWorkerOnly);
      if (placement.kind === "local") {
        const replaced = await options.beforeLocalCall?.(prep);
        const onToolError = options.onToolError;
        return (
          replaced ??
          executePreparedToolCall(
            prep,
            signal,
            emit,
            onToolError && ((err) => onToolError(prep, err)),
          )
        );
      }
      return runRemote(options, prep, placement, signal);
    },
  };
}

/** No tool is worker-only (a coordinator that knows of no announced tools). */
const noneWorkerOnly = (): undefined => undefined;

async function runRemote(
  options: RemoteExecutorOptions,
  prep: PreparedToolCall,
  placement: Extract<ToolPlacement, { kind: "remote" }>,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome> {
  if (signal?.aborted) return errorOutcome(ABORTED_MESSAGE);
  const { sessionId, runId, waiter } = options;
  const jobId = toolJobId(sessionId, runId, prep.toolCall.key ?? prep.toolCall.id);
  try {
    const queue = await options.queueFor(placement.queue, sessionId);
    const recalled = await recallFinishedCall(options, prep, queue, jobId, signal);
    if (recalled) return recalled;
    // Checked as late as possible: an abort recorded before this point keeps the job out.
    if (options.mayDispatch && !(await options.mayDispatch(prep)))
      return withdrawCall(options, prep, queue, jobId, signal);
    if (signal?.aborted) return abandonJob(queue, jobId, signal);
    const data: ToolJobData = {
      sessionId,
      runId,
      toolCallId: prep.toolCall.id,
      toolName: prep.tool.name,
      args: prep.args,
      retries: prep.tool.retries ?? DEFAULTS.toolRetries,
      trace: injectTraceContext(),
      ...(placement.prepareOnWorker ? { prepareOnWorker: true as const } : {}),
    };
    const retention = toolJobRetention(options.toolJobRetentionS ?? DEFAULTS.toolJobRetentionS);
    // Redis out of memory or away for a moment: the call waits for it (or an abort), since an
    // error result would answer the model with an outage the run would otherwise outlive.
    const add = () =>
      retryTransient(
        () => {
          options.beforeAdd?.();
          return addJobLean(queue, prep.tool.name, data, { jobId, attempts: 1, ...retention });
        },
        { attempts: Number.POSITIVE_INFINITY, retryIf: isPassingRedisError, signal },
      );
    const end = await waiter.waitForJobEnd(queue, jobId, add, signal);
    return end.kind === "aborted"
      ? abandonJob(queue, jobId, signal)
      : outcomeOf(options, prep, queue.name, jobId, end, signal);
  } catch (err) {
    if (signal?.aborted) return errorOutcome(ABORTED_MESSAGE);
    return errorOutcome(`${prep.tool.name}: could not dispatch the call: ${describeError(err)}`);
  }
}
