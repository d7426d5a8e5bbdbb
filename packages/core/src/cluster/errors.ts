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
