/**
 * A per-call deadline joined with the caller's abort signal.
 * `signal` aborts when either fires; `timedOut()` and `callerAborted()` say which did,
 * so a tool can throw the right message. Call `dispose()` when the work is over.
 */
export interface Deadline {
  signal: AbortSignal;
  timedOut(): boolean;
  callerAborted(): boolean;
  dispose(): void;
}

/**
 * Starts a deadline of `timeoutMs` combined (with `AbortSignal.any`) with the optional
 * `outer` signal of the tool call. The timer is cleared by `dispose()`.
 *
 * @example
 * const deadline = createDeadline(5000, signal);
 * try { await fetch(url, { signal: deadline.signal }); } finally { deadline.dispose(); }
 */
export function createDeadline(timeoutMs: number, outer?: AbortSignal): Deadline {
  const timer = new AbortController();
  let fired = false;
  const handle = setTimeout(() => {
    if (outer?.aborted) return;
    fired = true;
    timer.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  const signal = outer ? AbortSignal.any([outer, timer.signal]) : timer.signal;
  return {
    signal,
    timedOut: () => fired,
    callerAborted: () => !fired && outer?.aborted === true,
    dispose: () => clearTimeout(handle),
  };
}

/**
 * A short, readable cause of a failed `fetch`: Node's `TypeError("fetch failed")` hides the
 * real reason (e.g. `connect ECONNREFUSED 127.0.0.1:9`) in `cause`, which this digs out.
 *
 * @example describeFetchError(err) // "connect ECONNREFUSED 127.0.0.1:9"
 */
export function describeFetchError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause: unknown = err.cause;
  if (cause instanceof Error && cause.message) return cause.message;
  if (cause && typeof cause === "object" && "code" in cause) return String(cause.code);
  return err.message || err.name;
}
