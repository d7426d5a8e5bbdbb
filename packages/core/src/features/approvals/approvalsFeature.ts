import {
  InvalidCoordinatorJobError,
  LeaseLostError,
  RunParkedError,
  SessionStoreError,
} from "../../protocol/errors.js";
import type { ExecutedOutcome } from "../../types/index.js";
import type { FeatureHold, FeatureRun, HeldSession, OpenedRun, RunFeature } from "../runFeature.js";
import { type ApprovalExecutor, createApprovalExecutor } from "./approvalExecutor.js";
import { createApprovalGate } from "./approvalGate.js";
import type { ApprovalStore } from "./approvalStore.js";
import { isDecisionJob } from "./protocol.js";

/** What the approvals feature is built with (once, at the composition root). */
export interface ApprovalsFeatureDeps {
  /** Calls awaiting a decision, their decisions, and the parked batch's other outcomes. */
  approvals: ApprovalStore;
  /** Deny a call awaiting approval on its own after this long (a tool's own timeout wins). */
  approvalTimeoutMs?: number;
}

/**
 * Human approval, and the parking every call that waits outside its run relies on: a run
 * whose batch has calls waiting for a decision (approval, or a child run's answer: see the
 * child runs feature's `CallWait`) does not append that batch; it stores the batch's other
 * outcomes and parks, releasing the session, until the last decision resumes it.
 *
 * How it composes: in a child run its calls park the child (the root's owner decides them,
 * through the tree); after a handoff the same gate applies to the new agent's tools; a
 * follow-up while parked waits in the inbox; an abort denies every waiting call; it spends no
 * budget while parked.
 */
export function approvalsFeature(deps: ApprovalsFeatureDeps): RunFeature {
  return {
    name: "approvals",
    hold: (session) => approvalsHold(deps, session),
    intake: {
      refuses: (data) => (isDecisionJob(data) ? DECISION_ON_COORDINATOR_QUEUE : undefined),
    },
  };
}

/**
 * Why a `{ decision: … }` job on the coordinator queue is refused: whoever may add requests
 * must not be able to decide, so decisions travel on a queue of their own.
 */
const DECISION_ON_COORDINATOR_QUEUE = new InvalidCoordinatorJobError(
  "decision",
  "decisions are not taken on the coordinator queue: add them to the decisions queue (the approver role, docs/SECURITY.md)",
);

function approvalsHold(deps: ApprovalsFeatureDeps, session: HeldSession): FeatureHold {
  return { openRun: (run) => openApprovalsRun(deps, session, run) };
}

async function openApprovalsRun(
  deps: ApprovalsFeatureDeps,
  session: HeldSession,
  run: OpenedRun,
): Promise<FeatureRun> {
  const { sessionId, token } = session;
  const stored: ReadonlyMap<string, ExecutedOutcome> =
    run.kind === "resume" ? await deps.approvals.storedOutcomes(sessionId) : new Map();
  let executor: ApprovalExecutor | undefined;
  const gate = createApprovalGate({
    approvals: deps.approvals,
    sessionId,
    runId: run.runId,
    token,
    defaultTimeoutMs: deps.approvalTimeoutMs,
  });
  return {
    callWaits: [gate],
    wrapExecutor(inner, waits) {
      executor = createApprovalExecutor(inner, {
        decision: (key) => deps.approvals.decision(sessionId, key),
        stored,
        waits,
      });
      return executor;
    },
    // A call left waiting has not ended; one answered from a parked batch's store had its end
    // published before the run parked.
    holdsBack: (event) =>
      event.type === "toolExecEnd" &&
      executor !== undefined &&
      (executor.parked.has(event.toolCallId) || executor.reused.delete(event.toolCallId)),
    async beforeAppend() {
      if (executor && executor.parked.size > 0) await parkRun(deps, session, executor);
      return undefined;
    },
    async afterAppend(settle) {
      if (!executor) return;
      executor.finished.clear();
      if (!executor.touched()) return;
      // The stored outcomes of a parked batch go only once its results are surely appended.
      await settle();
      await deps.approvals.clear(sessionId, token).catch(() => undefined); // stale entries are harmless
    },
    async beforeFinish() {
      if (run.kind === "resume" || executor?.touched()) await forgetApprovals(deps, session);
    },
  };
}

/**
 * Instead of appending a batch that has calls awaiting a decision: stores its other outcomes
 * and parks the run (releasing the lease), then stops the loop with `RunParkedError`.
 */
async function parkRun(
  deps: ApprovalsFeatureDeps,
  session: HeldSession,
  executor: ApprovalExecutor,
): Promise<never> {
  const { sessionId, token } = session;
  let parked: Awaited<ReturnType<ApprovalStore["park"]>>;
  try {
    parked = await deps.approvals.park(sessionId, token, executor.finished);
  } catch (err) {
    throw new SessionStoreError(sessionId, err);
  }
  if (parked === "lost") throw new LeaseLostError(sessionId);
  throw new RunParkedError(sessionId, parked === "parked");
}

/**
 * Before a run that parked or decided calls is closed: forgets its batches' approvals (as
 * appending a decided batch does), so none outlives the run when that step was cut short (a
 * holder killed between appending the batch and forgetting them, whose successor finds the
 * answer already in the transcript). A Redis failure stops the run before it closes, to be
 * resumed and forgotten again.
 */
async function forgetApprovals(deps: ApprovalsFeatureDeps, session: HeldSession): Promise<void> {
  try {
    await deps.approvals.clear(session.sessionId, session.token);
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
}
