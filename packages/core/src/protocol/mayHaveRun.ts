import type { AgentToolResult } from "../types/index.js";

/**
 * What the model reads (after the tool's name) when a call's worker stopped answering and no
 * result of the call came back: the call may have run, its side effects may have happened.
 */
export const MAY_HAVE_RUN_MESSAGE =
  "the worker running this call stopped answering; the call may have run: check before repeating it";

/**
 * The `details` of a call's result (and of its `toolResult` message) when the call may have
 * run but its result is unknown: its worker died or stopped (SIGKILL, SIGSTOP, an event loop
 * blocked past its lock) and nothing it recorded came back within the coordinator's grace
 * (`YIEM_STOPPED_WORKER_GRACE_MS`). A client tells such a result from a plain failure by
 * `isMayHaveRun(message.details)`.
 */
export interface MayHaveRunDetails {
  /** Always `true`: the call may have run; repeating it may repeat its side effects. */
  mayHaveRun: true;
  /** How its worker was lost, e.g. `stopped 1 times, retries: 0`, or BullMQ's failed reason. */
  reason: string;
}

/**
 * The error result of a call that may have run (`MayHaveRunDetails`): one text block,
 * `<tool>: <MAY_HAVE_RUN_MESSAGE> (<reason>)`. Never throws.
 *
 * @example createMayHaveRunResult("sendEmail", "stopped 1 times, retries: 0")
 */
export function createMayHaveRunResult(toolName: string, reason: string): AgentToolResult {
  const text = `${toolName}: ${MAY_HAVE_RUN_MESSAGE} (${reason})`;
  return {
    content: [{ type: "text", text }],
    details: { mayHaveRun: true, reason } satisfies MayHaveRunDetails,
  };
}

/**
 * Whether a result's (or a `toolResult` message's) `details` say the call may have run with
 * its result unknown (`MayHaveRunDetails`). Reads nothing else; never throws.
 *
 * @example if (isMayHaveRun(message.details)) warn("check before repeating it");
 */
export function isMayHaveRun(details: unknown): details is MayHaveRunDetails {
  return (
    typeof details === "object" &&
    details !== null &&
    (details as { mayHaveRun?: unknown }).mayHaveRun === true
  );
}
