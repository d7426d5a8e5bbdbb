import { logToolError } from "../../ops/toolErrorLog.js";
import { eventBatchesOf } from "../../state/eventBatches.js";
import { readToolDone } from "../../state/toolDoneMarkers.js";
import type { PreparedToolCall } from "../../types/index.js";
import { guardLocalCall } from "./localCallGuard.js";
import { createRemoteExecutor } from "./remoteExecutor.js";
import type { OpenRun } from "./runEvents.js";
import type { SessionHold } from "./sessionHold.js";

/**
 * The executor of a run before the features wrap it: remote calls go to the tool queues (a
 * call the run left unanswered attaches to its job, or takes its finished marker), in-process
 * calls go through the local call guard. Never throws; failures become error results.
 */
export function createRunExecutor(
  hold: SessionHold,
  start: OpenRun,
  unanswered: Set<string>,
  mayDispatch: (prep: PreparedToolCall) => Promise<boolean>,
) {
  const { deps, sessionId } = hold;
  return createRemoteExecutor({
    sessionId,
    runId: start.runId,
    queueFor: deps.queueFor,
    waiter: deps.waiter,
    beforeLocalCall: (prep) => guardLocalCall(hold, prep, mayDispatch),
    mayDispatch,
    beforeAdd: () => eventBatchesOf(deps.command, deps.keys).sendSession(sessionId),
    workerOnly: deps.workerOnly,
    toolJobRetentionS: deps.toolJobRetentionS,
    readFinished: async (prep, queue, jobId) =>
      unanswered.has(prep.toolCall.id)
        ? readToolDone(deps.command, deps.keys, queue, jobId)
        : undefined,
    onToolError: (prep, err) =>
      logToolError(
        deps.log,
        { tool: prep.tool.name, toolCallId: prep.toolCall.id, sessionId, runId: start.runId },
        err,
      ),
  });
}
