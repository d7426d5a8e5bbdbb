import { Job, type JobsOptions, type Worker } from "bullmq";
import type { CoordinatorRequest, RunAnswer } from "../../protocol/coordinatorJob.js";
import { isPlainAsTaken } from "../../redis/leanCompletion.js";

/**
 * Where a held request job is: its input being recorded, waiting for its run's answer (the
 * state a run parked for approval, or waiting for child runs, keeps it in for days), or being
 * completed with its answer.
 */
export type HeldPhase = "recording" | "waiting" | "finishing";

/**
 * A request job a coordinator holds until its run answers it: what completing it, failing
 * it or handing it back needs, and nothing else. Not the BullMQ `Job` (its data, a megabyte
 * maybe, and its bound helpers), no promise, no closure: a coordinator may hold ten thousand
 * runs parked for approval, and each costs this record, its lock's map entry (`JobLocks`) and
 * its answer's watch (`ResponseWaits.watch`). The `Job` is built again when needed
 * (`jobOfHeld`).
 */
export interface HeldRequest {
  /** The lock token the job was fetched with. */
  token: string;
  sessionId: string;
  /** The agent its session belongs to (the answer's `agent` unless the run says otherwise). */
  agent: string;
  /** The job's name and options, as fetched (completing needs its options). */
  name: string;
  opts: JobsOptions;
  /**
   * The job's attempts made as it was taken, when it is plain (no parent, no deduplication
   * id): its completion need not read them again (`completeJobLean`). `undefined` otherwise.
   */
  plainAttempts: number | undefined;
  /** The parent call a child run's answer goes to. */
  parent: CoordinatorRequest["parent"];
  phase: HeldPhase;
  /** While recording: aborts the recording's retries when the job is let go. */
  letGo: AbortController | undefined;
  /**
   * While its job completes right behind its run's close (`RequestJobs.completeAhead`): the
   * answer its watch told meanwhile, for the ordinary completion if that one does not land.
   */
  ahead: { told: RunAnswer | undefined } | undefined;
  /** While recording or finishing: that work, for closing to wait for. */
  busy: Promise<void> | undefined;
}

/**
 * The BullMQ job of a held request, built again without its data: completing it, failing it
 * or moving it back to the wait list needs its id, options and the worker's scripts only.
 *
 * @example await jobOfHeld(worker, requestId, held).moveToCompleted(result, held.token, false);
 */
export function jobOfHeld(worker: Worker, requestId: string, held: HeldRequest): Job {
  const job = new Job(worker, held.name, undefined, held.opts, requestId);
  job.attemptsMade = held.plainAttempts ?? 0;
  return job;
}

/** `HeldRequest.plainAttempts` of a job as its worker took it. */
export function plainAttemptsOf(job: Job): number | undefined {
  return isPlainAsTaken(job) ? job.attemptsMade : undefined;
}
