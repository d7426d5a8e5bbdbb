import type { FeatureRuns } from "./featureRuns.js";
import type { OpenRun } from "./runEvents.js";
import type { SessionHold } from "./sessionHold.js";

/**
 * A resumed run's view of an abort recorded while no one could stop it (a parked run, a dead
 * holder, every coordinator down: `markRunAborted`, or a client's `requestAbort`), and a new
 * run's view of an abort that came before it opened (an `abortOnStart` mark it took, or what
 * a feature says: a child run's tree aborted meanwhile).
 */
export interface ResumedRunAbort {
  /**
   * Whether the run is aborted, read from Redis (remembered once true). A new root run is
   * never (any abort reaches it through its signal) unless it opened aborted.
   */
  check(): Promise<boolean>;
  /** Once the resumed batch is appended: aborts the run if an abort was seen. */
  afterResumedBatch(): void;
}

/**
 * Watches a resumed run for an abort recorded while no one held it. It is read when the run
 * resumes and again right before each call the run left unanswered is dispatched (an approved
 * call, say), so an abort recorded before that moment keeps the call from running. The run is
 * not stopped at once while its resumed batch lacks results: those calls get theirs first
 * (stored outcomes, denials, the ends of jobs already dispatched, the aborted result for the
 * rest), and the run is aborted once that batch is appended. The features are asked once
 * (`abortedAtOpen`) for an abort that came before the run opened.
 */
export function watchResumedRunAbort(
  hold: SessionHold,
  start: OpenRun,
  features: FeatureRuns,
  controller: AbortController,
): ResumedRunAbort {
  const { deps, sessionId } = hold;
  let aborted = false;
  let openChecked = false;
  return {
    async check() {
      if (aborted) return true;
      if (!openChecked) {
        openChecked = true;
        aborted = (start.kind === "new" && start.aborted) || (await features.abortedAtOpen());
      }
      if (aborted || start.kind !== "resume") return aborted;
      aborted = await deps.store.takeAbortRequest(sessionId);
      if (aborted) deps.log.info({ sessionId, runId: start.runId }, "resumed run was aborted");
      return aborted;
    },
    afterResumedBatch() {
      if (aborted) controller.abort();
    },
  };
}
