import type { RunAnswer } from "../../protocol/coordinatorJob.js";
import type { AgentMessage } from "../../types/index.js";
import type { OpenRun } from "./runEvents.js";
import type { SessionHold } from "./sessionHold.js";

/** What a run did, counted from the messages it added to the transcript. */
export interface RunSummary {
  /** Model answers (assistant messages). */
  turns: number;
  /** Tool calls, counted by their results (each call has exactly one). */
  toolCalls: number;
}

/**
 * Counts the turns and tool calls in `messages` (the messages one run added). Never reads
 * anything else; user messages count as neither.
 *
 * @example summarizeRun(state.messages.slice(before)) // { turns: 2, toolCalls: 3 }
 */
export function summarizeRun(messages: readonly AgentMessage[]): RunSummary {
  let turns = 0;
  let toolCalls = 0;
  for (const message of messages) {
    if (message.role === "assistant") turns++;
    else if (message.role === "toolResult") toolCalls++;
  }
  return { turns, toolCalls };
}

/**
 * Logs a finished run: what this holder ran of it, and the whole run's usage. The line is
 * written once the current pass of the event loop is done (`setImmediate`): its serialisation
 * does not delay what the run's close set going (its request job's completion).
 */
export function logRunFinished(
  hold: SessionHold,
  start: OpenRun,
  answer: RunAnswer,
  before: number,
  startedAt: number,
): void {
  const fields = {
    sessionId: hold.sessionId,
    runId: start.runId,
    ...(hold.agent ? { agent: hold.agent.name } : {}),
    ...summarizeRun(hold.state.messages.slice(before)),
    durationMs: Date.now() - startedAt,
    stopReason: answer.response.stopReason,
    usage: answer.usage,
    ...(start.kind === "resume" ? { resumed: true } : {}),
  };
  setImmediate(() => hold.deps.log.info(fields, "run finished"));
}
