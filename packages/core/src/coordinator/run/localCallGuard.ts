import { ABORTED_MESSAGE } from "../../tools/prepareToolCall.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type { ExecutedOutcome, PreparedToolCall } from "../../types/index.js";
import type { SessionHold } from "./sessionHold.js";

/** The text a non-idempotent in-process call gets when a coordinator died while it ran. */
export const INTERRUPTED_MESSAGE = "interrupted: the coordinator stopped while this call ran";

/** The text of an in-process call a holder did not start because it had lost the session. */
const NOT_HOLDER_MESSAGE =
  "not run: this coordinator lost the session; its next holder runs or reports this call";

/**
 * Before a call runs in this process: a call a dead predecessor was running is run again
 * only when its tool is idempotent; otherwise it gets the "interrupted" error result and the
 * model decides. A call of a run aborted before it starts (`mayDispatch` says no) gets the
 * aborted result. Every call that does run is marked first, under the lease, so a successor
 * can tell; a holder whose lease is gone (another coordinator may be running this call) does
 * not run it, and its error result never lands (its next transcript write is fenced out).
 */
export async function guardLocalCall(
  hold: SessionHold,
  prep: PreparedToolCall,
  mayDispatch: (prep: PreparedToolCall) => Promise<boolean>,
): Promise<ExecutedOutcome | undefined> {
  const id = prep.toolCall.id;
  if (hold.interrupted.has(id) && !prep.tool.idempotent) {
    return { result: createErrorToolResult(INTERRUPTED_MESSAGE), isError: true };
  }
  if (!(await mayDispatch(prep))) {
    return { result: createErrorToolResult(ABORTED_MESSAGE), isError: true };
  }
  if (!(await hold.deps.store.markRunning(hold.sessionId, hold.token, id))) {
    return { result: createErrorToolResult(NOT_HOLDER_MESSAGE), isError: true };
  }
  return undefined;
}
