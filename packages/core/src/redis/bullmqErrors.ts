import { ErrorCode } from "bullmq";
import { type ErrorContext, YiemError } from "../errors/yiemError.js";
import { classifyRedisError } from "./redisErrors.js";

/**
 * BullMQ's refusals to finish a job that say it is no longer the caller's to finish: it was
 * removed (`JobNotExist`), its lock expired or was taken (`JobLockNotExist`,
 * `JobLockMismatch`), or it left the active state (`JobNotInState`).
 */
const MOVED_ON_CODES = new Set<number>([
  ErrorCode.JobNotExist,
  ErrorCode.JobLockNotExist,
  ErrorCode.JobLockMismatch,
  ErrorCode.JobNotInState,
]);

/**
 * BullMQ refused to complete, fail or move a job because it moved on without the caller (see
 * `MOVED_ON_CODES`): trying again can never succeed. Terminal; `code` is BullMQ's `ErrorCode`,
 * the message and `cause` BullMQ's own error. Made by `classifyBullmqError` only.
 */
export class JobMovedOnError extends YiemError {
  override name = "JobMovedOnError";
  constructor(
    readonly code: number,
    cause: Error,
    context: ErrorContext,
  ) {
    super(cause.message, { cause, context });
  }
}

/**
 * Turns an error a BullMQ call threw into a Yiem error: a `JobMovedOnError` when BullMQ says
 * the job moved on (read from its numeric `code`, never its text), else what
 * `classifyRedisError` makes of it (its Redis commands fail as Redis' do). A `YiemError` is
 * returned as it is. `context` names the job's session or request. Never throws.
 *
 * @example if (classifyBullmqError(err) instanceof JobMovedOnError) return; // someone else's now
 */
export function classifyBullmqError(err: unknown, context: ErrorContext = {}): YiemError {
  if (err instanceof YiemError) return err;
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (typeof code === "number" && MOVED_ON_CODES.has(code))
    return new JobMovedOnError(code, err as Error, context);
  return classifyRedisError(err);
}

/**
 * BullMQ's `failedReason` of a job it failed because its worker stopped renewing its lock
 * (`job stalled more than allowable limit`): it says so in text only.
 */
const STALLED_REASON = /stalled/i;

/**
 * A job BullMQ failed, as a Yiem error: `reason` is its `failedReason` (also the message),
 * `stalled` says BullMQ failed it because its worker stopped (died, or blocked past its lock)
 * rather than because the work threw. Transient when stalled (the work itself did not fail),
 * terminal otherwise. Made by `classifyJobFailure` only.
 */
export class JobFailedError extends YiemError {
  override name = "JobFailedError";
  constructor(
    readonly reason: string,
    readonly stalled: boolean,
    context: ErrorContext,
  ) {
    super(reason, { retry: stalled ? "transient" : "terminal", context });
  }
}

/**
 * Reads a failed job's `failedReason` (BullMQ gives a reason string, not an error): the one
 * place Yiem reads it for a stall. `context` names the job's session, tool and call.
 *
 * @example classifyJobFailure("job stalled more than allowable limit", { toolName: "fetch" }).stalled // true
 */
export function classifyJobFailure(
  failedReason: string,
  context: ErrorContext = {},
): JobFailedError {
  return new JobFailedError(failedReason, STALLED_REASON.test(failedReason), context);
}
