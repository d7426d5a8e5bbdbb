import type { Logger } from "../../ops/logger.js";
import type { SessionStore } from "../../state/sessionStore.js";
import type { ApprovalDecision, ApprovalRequest, ApprovalStore } from "./approvalStore.js";
import type { DecisionJobResult, DecisionRequest } from "./protocol.js";

/** The reason a call awaiting approval is denied with when its session is aborted. */
export const ABORTED_APPROVAL_REASON = "the session was aborted";

/** What recording decisions needs: the store, and a way to resume a session that may go on. */
export interface DecisionDeps {
  approvals: ApprovalStore;
  /** Starts working the session here if no coordinator holds it (see `SessionTasks.ensureRunning`). */
  resume: (sessionId: string) => Promise<void>;
  log: Logger;
  /** The tree of child runs, and how a child session is aborted (recorded, then announced). */
  children?: {
    /** The calls of a session's parked batch that wait for child runs. */
    waiting: (
      sessionId: string,
    ) => Promise<Array<ApprovalRequest & { child: { sessionId: string } }>>;
    abort: (childSessionId: string) => Promise<void>;
  };
}

/** What a decision did: recorded (with the job's result), or a no-op with the reason its job fails with. */
export type DecisionOutcome =
  | { ok: true; result: DecisionJobResult }
  | { ok: false; reason: string };

function describeDecided(decision: ApprovalDecision): string {
  const verb = decision.approved ? "approved" : "denied";
  const by = decision.by ? ` by ${decision.by}` : "";
  return `${verb}${by} at ${new Date(decision.decidedAt).toISOString()}`;
}

/**
 * Records a decision on a call awaiting approval, at most once, and resumes the run when no
 * undecided call of its batch is left. A call that no longer waits, or was decided already,
 * is a no-op reported as `{ ok: false, reason: "no-op: …" }`: it never runs a call twice.
 * `known` is the call's approval request when the caller read it already (not read again).
 * Throws only when Redis fails.
 */
export async function recordDecision(
  deps: DecisionDeps,
  request: DecisionRequest,
  now = Date.now(),
  known?: ApprovalRequest,
): Promise<DecisionOutcome> {
  const { sessionId, callKey, approved } = request;
  const decision: ApprovalDecision = {
    approved,
    decidedAt: now,
    ...(request.by ? { by: request.by } : {}),
    ...(request.reason ? { reason: request.reason } : {}),
  };
  const outcome = await deps.approvals.decide(sessionId, callKey, decision, known);
  const call = `call ${callKey} of session ${sessionId}`;
  if (outcome.kind === "notWaiting")
    return { ok: false, reason: `no-op: ${call} is not awaiting approval` };
  if (outcome.kind === "alreadyDecided")
    return { ok: false, reason: `no-op: ${call} was already ${describeDecided(outcome.decision)}` };
  deps.log.info({ sessionId, callKey, approved, by: request.by }, "tool call decided");
  if (outcome.resume) await deps.resume(sessionId);
  return {
    ok: true,
    result: { sessionId, toolCallId: callKey, approved, resumed: outcome.resume },
  };
}

/**
 * Carries an abort to a run no coordinator may be holding: marks the session's open run
 * aborted (whoever resumes it stops it at once) and denies each of its calls awaiting
 * approval, so a parked run resumes, gives those calls their denial as the result and ends
 * with `stopReason: "aborted"` without asking the model again. Any coordinator may do it;
 * repeats are no-ops. Never throws: a Redis error is logged.
 */
export async function abortWaitingRun(
  deps: DecisionDeps,
  store: SessionStore,
  sessionId: string,
): Promise<void> {
  try {
    if (!(await store.markRunAborted(sessionId))) return;
    const pending = await deps.approvals.pending(sessionId);
    for (const waiting of pending.filter((p) => p.sessionId === sessionId)) {
      const reason = ABORTED_APPROVAL_REASON;
      const denial = { sessionId, callKey: waiting.callKey, approved: false, reason };
      await recordDecision(deps, denial, Date.now(), waiting);
    }
    await abortChildRuns(deps, sessionId);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, sessionId }, "could not abort a waiting run");
  }
}

/**
 * Carries an abort down the tree: each child run the session's parked batch waits for is
 * aborted (recorded in the child, then announced, so its holder stops it and its own children
 * are aborted in turn), and the call waiting for it is answered as not answered, so the parent
 * resumes and ends aborted without waiting for its children.
 */
async function abortChildRuns(deps: DecisionDeps, sessionId: string): Promise<void> {
  if (!deps.children) return;
  for (const waiting of await deps.children.waiting(sessionId)) {
    await deps.children.abort(waiting.child.sessionId);
    const reason = ABORTED_APPROVAL_REASON;
    const denial = { sessionId, callKey: waiting.callKey, approved: false, reason };
    await recordDecision(deps, denial, Date.now(), waiting);
  }
}

/**
 * Denies every call whose approval timeout has passed (any coordinator may sweep; a call
 * decided meanwhile is a no-op). Never throws: a Redis error waits for the next sweep.
 */
/** Where a sweep of the approval index goes on from (see `dropOrphanedIndexEntries`). */
export interface IndexSweep {
  from: number;
}

/**
 * Drops one page of approval index entries whose call has no request (see
 * `ApprovalStore.dropOrphanEntries`), entries older than `minAgeMs` only, and moves `sweep`
 * on. Never throws: a failed page is tried again on the next call.
 */
export async function dropOrphanedIndexEntries(
  deps: DecisionDeps,
  sweep: IndexSweep,
  minAgeMs: number,
  now = Date.now(),
): Promise<void> {
  try {
    const { next, dropped } = await deps.approvals.dropOrphanEntries(sweep.from, now - minAgeMs);
    sweep.from = next;
    if (dropped > 0)
      deps.log.info({ dropped }, "dropped approval index entries whose call has no request");
  } catch (err) {
    deps.log.debug({ err: (err as Error).message }, "could not sweep the approval index");
  }
}

export async function denyExpiredApprovals(deps: DecisionDeps, now = Date.now()): Promise<void> {
  try {
    for (const { sessionId, callKey } of await deps.approvals.due(now)) {
      const request = await deps.approvals.requestOf(sessionId, callKey);
      const waited = request?.deadline ? request.deadline - request.requestedAt : undefined;
      const reason =
        waited !== undefined
          ? `no decision within ${waited} ms (approval timeout)`
          : "no decision before the approval timeout";
      const denial = { sessionId, callKey, approved: false, reason };
      await recordDecision(deps, denial, now, request);
    }
  } catch (err) {
    deps.log.debug({ err: (err as Error).message }, "could not sweep approval timeouts");
  }
}
