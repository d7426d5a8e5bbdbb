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
