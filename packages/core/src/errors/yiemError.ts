/**
 * Whether trying the same thing again may succeed: `transient` for a failure that passes by
 * itself (Redis away for a moment, a server restarting, a deadline missed), `terminal` for one
 * that fails the same way every time (a bad setting, an invalid request, a lost lease).
 */
export type RetryIntent = "terminal" | "transient";

/**
 * Where an error happened, as far as the thrower knows: the session, the request (its
 * coordinator-queue job id), the tool and the tool call. Every field is optional; an error
 * names only what applies to it.
 */
export interface ErrorContext {
  /** The session the error happened in. */
  sessionId?: string;
  /** The request (its coordinator-queue job id, what `send` returns as `requestId`). */
  requestId?: string;
  /** The tool whose call or definition failed. */
  toolName?: string;
  /** The tool call's id (the model's). */
  toolCallId?: string;
}

/** How a `YiemError` is made, beyond its message. */
export interface YiemErrorOptions {
  /** Default `terminal`. */
  retry?: RetryIntent;
  /** Where it happened. Default: nothing named. */
  context?: ErrorContext;
  /** The error this one wraps (`Error.cause`); absent when not given. */
  cause?: unknown;
}

/**
 * The base of every error Yiem throws: its message for people, `retry` for programs that
 * decide whether to try again (read it, or `isTransient(err)`, never the message), and
 * `context` naming the session, request, tool and call where they apply. Each subclass keeps
 * its own `name`, fields and message. Errors of BullMQ and ioredis are turned into Yiem errors
 * at the boundary (`classifyRedisError`): a `YiemError` never reads another error's text.
 *
 * @example if (err instanceof YiemError && err.retry === "transient") scheduleRetry()
 */
export class YiemError extends Error {
  override name = "YiemError";
  /** Whether trying again may succeed. */
  readonly retry: RetryIntent;
  /** Where it happened (session, request, tool, call), as far as the thrower knows. */
  readonly context: ErrorContext;

  constructor(message: string, options: YiemErrorOptions = {}) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.retry = options.retry ?? "terminal";
    this.context = options.context ?? {};
  }
}

/**
 * True for a `YiemError` whose `retry` is `transient`: trying again may succeed. False for
 * anything else, a foreign error included (classify those first, e.g. `classifyRedisError`);
 * never reads a message.
 *
 * @example if (isTransient(err)) await retryLater()
 */
export function isTransient(err: unknown): boolean {
  return err instanceof YiemError && err.retry === "transient";
}
