import type { Queue } from "bullmq";
import { onAbort } from "../tools/abortListener.js";
import { executePreparedToolCall } from "../tools/executePreparedToolCall.js";
import { ABORTED_MESSAGE } from "../tools/prepareToolCall.js";
import { createErrorToolResult, describeError } from "../tools/toolResults.js";
import { injectTraceContext } from "../tracing/spans.js";
import type { ExecutedOutcome, PreparedToolCall, ToolExecutor } from "../types/index.js";
import { LeaseLostError } from "./errors.js";
import type { JobEnd, ResultWaiter } from "./resultWaiter.js";
import { ABORTED_JOB_REASON, TOOL_JOB_RETENTION, type ToolJobData, toolJobId } from "./toolJobs.js";
import { remoteQueueOf } from "./toolLimits.js";

/** What a remote executor needs: where the run belongs and how to reach the tool queues. */
export interface RemoteExecutorOptions {
  sessionId: string;
  runId: string;
  /** The BullMQ queue of a tool queue name (created on first use). */
  queueFor: (queue: string | undefined) => Promise<Queue>;
  waiter: ResultWaiter;
  /**
   * Called before a call runs in this process; an outcome returned here replaces running it
   * (the cluster uses it to refuse re-running an interrupted call that is not idempotent).
   */
  beforeLocalCall?: (prep: PreparedToolCall) => Promise<ExecutedOutcome | undefined>;
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

/** Ends the wait when the run is aborted: removes the job if it has not started yet. */
function abortWaiting(
  queue: Queue,
  jobId: string,
  signal: AbortSignal | undefined,
): { promise: Promise<ExecutedOutcome>; dispose: () => void } {
  let dispose: () => void = () => undefined;
  const promise = new Promise<ExecutedOutcome>((resolve) => {
    if (!signal) return;
    dispose = onAbort(signal, async () => {
      // A coordinator that lost or handed over the session leaves the job for the next holder.
      if (!(signal.reason instanceof LeaseLostError)) {
        await removeIfNotStarted(queue, jobId).catch(() => undefined);
      }
      resolve(errorOutcome(ABORTED_MESSAGE));
    });
  });
  return { promise, dispose };
}

/** Turns how a job ended into the call's outcome; a completed one names its worker. */
function outcomeOf(prep: PreparedToolCall, end: JobEnd): ExecutedOutcome {
  const name = prep.tool.name;
  if (end.kind === "completed") {
    const { result, isError, workerId } = end.value;
    return { result, isError, workerId };
  }
  if (end.kind === "missing")
    return errorOutcome(`${name}: the tool job disappeared before it finished`);
  if (end.reason === ABORTED_JOB_REASON) return errorOutcome(ABORTED_MESSAGE);
  if (/stalled/i.test(end.reason)) {
    return errorOutcome(
      `${name}: the worker running this call stopped and the call was not retried further (${end.reason})`,
    );
  }
  return errorOutcome(`${name}: the tool job failed: ${end.reason}`);
}

/**
 * The cluster's `ToolExecutor`. Calls of a parallel batch, and every call of a tool with an
 * explicit `queue` or a cluster-wide limit (`remoteQueueOf`), become jobs on the tool queues; other calls (sequential batches) run in
 * this process. Job ids derive from session, run and call id, so a re-dispatch after a crash
 * attaches to the existing job. Never throws: queue errors, dead workers and aborts become
 * error results.
 */
export function createRemoteExecutor(options: RemoteExecutorOptions): ToolExecutor {
  return {
    async execute(prep, signal, emit, context) {
      if (context?.mode !== "parallel" && !remoteQueueOf(prep.tool)) {
        const replaced = await options.beforeLocalCall?.(prep);
        return replaced ?? executePreparedToolCall(prep, signal, emit);
      }
      return runRemote(options, prep, signal);
    },
  };
}

async function runRemote(
  options: RemoteExecutorOptions,
  prep: PreparedToolCall,
  signal: AbortSignal | undefined,
): Promise<ExecutedOutcome> {
  if (signal?.aborted) return errorOutcome(ABORTED_MESSAGE);
  const { sessionId, runId, waiter } = options;
  const jobId = toolJobId(sessionId, runId, prep.toolCall.key ?? prep.toolCall.id);
  try {
    const queue = await options.queueFor(remoteQueueOf(prep.tool));
    const data: ToolJobData = {
      sessionId,
      runId,
      toolCallId: prep.toolCall.id,
      toolName: prep.tool.name,
      args: prep.args,
      retries: prep.tool.retries ?? 0,
      trace: injectTraceContext(),
    };
    const ended = waiter.wait(queue, jobId);
    await queue.add(prep.tool.name, data, { jobId, attempts: 1, ...TOOL_JOB_RETENTION });
    waiter.startPolling(jobId);
    const aborted = abortWaiting(queue, jobId, signal);
    const result = await Promise.race([ended.then((end) => outcomeOf(prep, end)), aborted.promise]);
    aborted.dispose();
    waiter.forget(jobId);
    return result;
  } catch (err) {
    waiter.forget(jobId);
    return errorOutcome(`${prep.tool.name}: could not dispatch the call: ${describeError(err)}`);
  }
}
