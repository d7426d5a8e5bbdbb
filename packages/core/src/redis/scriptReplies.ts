/**
 * The reply codes of Yiem's Lua scripts (`scripts/*.lua`), named as each script's header
 * names them. A script that replies with an array puts its code first. Compare replies with
 * these names, never with bare numbers.
 */

/** `renewLease-1.lua`. */
export const RenewLeaseReply = {
  renewed: 1,
  lost: 0,
} as const;

/** `takeOverLease-1.lua`. */
export const TakeOverLeaseReply = {
  takenOver: 1,
  /** The lease holds another token now (taken over by someone else, or released). */
  notTheDeadHolders: 0,
} as const;

/** `releaseLeaseIfIdle-4.lua`. */
export const ReleaseLeaseIfIdleReply = {
  released: 1,
  /** An input, a follow-up or an open run waits: the lease is kept. */
  workPending: 0,
  notOurs: -1,
} as const;

/** `enqueueInput-8.lua` (the first element; `answered` comes with the response JSON). */
export const EnqueueInputReply = {
  /** The id was recorded with another input (a job id is the key of one request). */
  reused: 3,
  answered: 2,
  alreadyKnown: 1,
  queued: 0,
} as const;

/** `startRun-9.lua` (the first element; the rest depends on it, see the script's header). */
export const StartRunReply = {
  notOurs: -1,
  nothingToDo: 0,
  /** A new run, opened by input `runId`: `{1, runId, message, aborted, order}` (`aborted`: 1 or 0). */
  newRun: 1,
  /** A run is open: `{2, runId, from, order, inputId...}`. */
  resume: 2,
  /** A follow-up waits, too fresh to open a run: `{3, order}`. */
  followUpWaits: 3,
  /** The open run is parked; the lease was released in the same step. */
  parked: 4,
  /** A request sent before the next input is not recorded yet: nothing opens now. */
  olderOnItsWay: 5,
} as const;

/** `drainInputs-6.lua` (the first element; `moved` is followed by id, message pairs). */
export const DrainInputsReply = {
  moved: 1,
  notOurs: -1,
  /** Not the expected length: nothing moved. */
  notExpectedLength: -2,
} as const;

/**
 * `appendMessage-3.lua`, `appendMessages-3.lua` and `appendHandoff-5.lua`: the transcript's
 * length, or one of these (both negative, so never a length).
 */
export const AppendReply = {
  notOurs: -1,
  /** Not the expected length: nothing written. */
  notExpectedLength: -2,
} as const;

/** `finishRun.lua`. */
export const FinishRunReply = {
  /** Closed; work waits (an input, a follow-up), so the lease is kept. */
  closed: 1,
  /** Closed, and the lease released in the same step: nothing waits. */
  closedIdle: 2,
  notOurs: -1,
  /** Not the expected length: nothing changed. */
  notExpectedLength: -2,
} as const;

/** `markRunAborted-2.lua`. */
export const MarkRunAbortedReply = {
  marked: 1,
  noRunOpen: 0,
} as const;

/** `abortChildRun-3.lua`. */
export const AbortChildRunReply = {
  marked: 1,
  /** No run open: the session's next run opens aborted. */
  markedForStart: 0,
} as const;

/** `takeAbortRequest-2.lua`. */
export const TakeAbortRequestReply = {
  aborted: 1,
  notAborted: 0,
} as const;

/** `requestApproval-2.lua`. */
export const RequestApprovalReply = {
  recordedNow: 1,
  alreadyKnown: 0,
  notOurs: -1,
} as const;

/** `parkRun-5.lua`. */
export const ParkRunReply = {
  parkedAndReleased: 1,
  /** Every call is decided already: resume now. */
  allDecided: 0,
  notOurs: -1,
} as const;

/** `decideApproval-4.lua` (the first element; `decidedAlready` comes with the decision JSON). */
export const DecideApprovalReply = {
  /** Recorded; other calls still wait. */
  recorded: 1,
  /** Recorded; the run may resume. */
  recordedMayResume: 2,
  notWaiting: -1,
  decidedAlready: -2,
} as const;

/** `saveWrittenTool-4.lua` (the first element; the definition follows). */
export const SaveWrittenToolReply = {
  unchanged: 0,
  saved: 1,
} as const;

/** `addPlainJobs.lua`: `notPlain` for the whole call, else one of the others a job. */
export const AddPlainJobReply = {
  added: 1,
  /** A job with that id exists: left as it is (a `duplicated` event), as BullMQ leaves it. */
  existed: 2,
  /** The queue's meta holds a global concurrency or rate limit, or no `opts.maxLenEvents`: nothing written. */
  notPlain: 0,
} as const;

/** `takeJob-8.lua`, when it took nothing and changed nothing (else BullMQ's reply, see its header). */
export const TakeJobReply = {
  /** Paused, a global concurrency or rate limit, or a delayed job due: BullMQ's take must run. */
  notPlain: 1,
} as const;
