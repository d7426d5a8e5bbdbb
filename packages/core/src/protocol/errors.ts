/** Redis could not be reached or refused a command; `target` never includes a password. */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
  constructor(
    readonly target: string,
    cause: unknown,
  ) {
    super(
      `Redis unreachable at ${target}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** `waitForResponse` gave up. */
export class ResponseTimeoutError extends Error {
  override name = "ResponseTimeoutError";
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
  ) {
    super(`no response for run ${runId} within ${timeoutMs} ms (is a coordinator running?)`);
  }
}

/**
 * A reader of a session's events fell behind: more live events came for it than its queue
 * holds (`maxQueuedEvents`, `maxQueuedBytes`) while it took none, so its stream ended rather
 * than buffer without limit. Nothing is lost: the events after `afterSeq` (the last one it was
 * given; 0 for none) are in the session's stream, to read again with `events(…, { afterSeq })`
 * (an SSE client resumes with `Last-Event-ID`).
 */
export class EventReaderBehindError extends Error {
  override name = "EventReaderBehindError";
  constructor(
    readonly sessionId: string,
    readonly afterSeq: number,
  ) {
    super(
      `the reader of session ${sessionId}'s events fell behind after event ${afterSeq}: read again after it`,
    );
  }
}

/** A coordinator lost its hold on a session (another coordinator took it over). */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
  constructor(readonly sessionId: string) {
    super(`lost the lease on session ${sessionId}`);
  }
}

/**
 * Redis failed while a coordinator wrote a session's state (an OOM under `noeviction`, a
 * reset connection, a failover). The coordinator keeps the session and tries again later:
 * the run stays open in Redis, so nothing is lost.
 */
export class SessionStoreError extends Error {
  override name = "SessionStoreError";
  constructor(
    readonly sessionId: string,
    cause: unknown,
  ) {
    super(
      `Redis failed on session ${sessionId}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** A coordinator-queue job whose data cannot be a request; `field` names what is wrong. */
export class InvalidCoordinatorJobError extends Error {
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
 * not `released`, every decision came in meanwhile and the run resumes at once.
 */
export class RunParkedError extends Error {
  override name = "RunParkedError";
  constructor(
    readonly sessionId: string,
    readonly released: boolean,
  ) {
    super(`session ${sessionId}: the run is parked until its tool calls are approved or denied`);
  }
}

/** A decision job the coordinators refused: `reason` is its `failedReason` (e.g. `no-op: …`). */
export class DecisionRefusedError extends Error {
  override name = "DecisionRefusedError";
  constructor(readonly reason: string) {
    super(reason);
  }
}
