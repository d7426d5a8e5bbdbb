import { YiemError } from "../errors/yiemError.js";

/**
 * Redis could not be reached or refused a command; `target` never includes a password.
 * Transient: Redis may come back.
 */
export class RedisUnavailableError extends YiemError {
  override name = "RedisUnavailableError";
  constructor(
    readonly target: string,
    cause: unknown,
  ) {
    super(
      `Redis unreachable at ${target}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { retry: "transient", cause },
    );
  }
}

/**
 * `waitForResponse` gave up on request `requestId` (`runId` is the same id, its older name).
 * Transient: the answer may still come.
 */
export class ResponseTimeoutError extends YiemError {
  override name = "ResponseTimeoutError";
  /** The request waited for (its coordinator-queue job id). */
  readonly requestId: string;
  /** The same id as `requestId`: its older name, an alias kept for existing callers. */
  readonly runId: string;
  constructor(
    requestId: string,
    readonly timeoutMs: number,
  ) {
    super(`no response for run ${requestId} within ${timeoutMs} ms (is a coordinator running?)`, {
      retry: "transient",
      context: { requestId },
    });
    this.requestId = requestId;
    this.runId = requestId;
  }
}

/**
 * A reader of a session's events fell behind: more live events came for it than its queue
 * holds (`maxQueuedEvents`, `maxQueuedBytes`) while it took none, so its stream ended rather
 * than buffer without limit. Nothing is lost: the events after `afterSeq` (the last one it was
 * given; 0 for none) are in the session's stream, to read again with `events(…, { afterSeq })`
 * (an SSE client resumes with `Last-Event-ID`).
 */
export class EventReaderBehindError extends YiemError {
  override name = "EventReaderBehindError";
  constructor(
    readonly sessionId: string,
    readonly afterSeq: number,
  ) {
    super(
      `the reader of session ${sessionId}'s events fell behind after event ${afterSeq}: read again after it`,
      { retry: "transient", context: { sessionId } },
    );
  }
}

/**
 * A coordinator lost its hold on a session (another coordinator took it over). Terminal for
 * this coordinator: the session is someone else's.
 */
export class LeaseLostError extends YiemError {
  override name = "LeaseLostError";
  constructor(readonly sessionId: string) {
    super(`lost the lease on session ${sessionId}`, { context: { sessionId } });
  }
}

/**
 * Redis failed while a coordinator wrote a session's state (an OOM under `noeviction`, a
 * reset connection, a failover). The coordinator keeps the session and tries again later:
 * the run stays open in Redis, so nothing is lost. Transient.
 */
export class SessionStoreError extends YiemError {
  override name = "SessionStoreError";
  constructor(
    readonly sessionId: string,
    cause: unknown,
  ) {
    super(
      `Redis failed on session ${sessionId}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { retry: "transient", cause, context: { sessionId } },
    );
  }
}

/**
 * A coordinator-queue job whose data cannot be a request; `field` names what is wrong.
 * Terminal: the same data is refused again.
 */
export class InvalidCoordinatorJobError extends YiemError {
  override name = "InvalidCoordinatorJobError";
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/**
 * Thrown out of the agent loop when a batch has calls awaiting approval: the batch's other
 * outcomes are stored and, when `released`, the run is parked and the lease given up. When
 * not `released`, every decision came in meanwhile and the run resumes at once. Terminal: the
 * run goes on only when decided.
 */
export class RunParkedError extends YiemError {
  override name = "RunParkedError";
  constructor(
    readonly sessionId: string,
    readonly released: boolean,
  ) {
    super(`session ${sessionId}: the run is parked until its tool calls are approved or denied`, {
      context: { sessionId },
    });
  }
}

/**
 * A decision job the coordinators refused: `reason` is its `failedReason` (e.g. `no-op: …`).
 * Terminal.
 */
export class DecisionRefusedError extends YiemError {
  override name = "DecisionRefusedError";
  constructor(readonly reason: string) {
    super(reason);
  }
}
