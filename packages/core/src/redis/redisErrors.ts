import { isTransient, YiemError } from "../errors/yiemError.js";

/**
 * How a Redis command failed, as `classifyRedisError` reads it from ioredis' error:
 * - `unreachable`: the connection was refused, reset, timed out or closed;
 * - `failover`: a Redis Cluster failing over or resharding (`CLUSTERDOWN`, `TRYAGAIN`, `MOVED`,
 *   `ASK`, `LOADING`, `MASTERDOWN`, too many redirections, a slots refresh failing), or a lost
 *   connection named inside another error;
 * - `out-of-memory`: Redis refusing writes at `maxmemory` under `noeviction` (`OOM …`);
 * - `not-permitted`: the ACL user may not run the command or touch the key (`NOPERM …`);
 * - `command`: anything else (`WRONGTYPE`, a script error…): the command itself fails.
 */
export type RedisFailure =
  | "unreachable"
  | "failover"
  | "out-of-memory"
  | "not-permitted"
  | "command";

/** The failures that pass by themselves: Redis comes back, the cluster settles, memory frees. */
const TRANSIENT_FAILURES = new Set<RedisFailure>(["unreachable", "failover", "out-of-memory"]);

/**
 * A Redis command's failure as a Yiem error: `failure` says how (`RedisFailure`), `retry` is
 * `transient` for `unreachable`, `failover` and `out-of-memory`, else `terminal`; the message
 * and `cause` are ioredis' own error. Made by `classifyRedisError` only.
 */
export class RedisCommandError extends YiemError {
  override name = "RedisCommandError";
  /** How the command failed. */
  readonly failure: RedisFailure;
  constructor(failure: RedisFailure, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), {
      retry: TRANSIENT_FAILURES.has(failure) ? "transient" : "terminal",
      cause,
    });
    this.failure = failure;
  }
}

/** Error codes of a connection that cannot reach Redis (as opposed to a failed command). */
const CONNECTION_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** ioredis's message for a command on a connection that closed under it. */
const CONNECTION_CLOSED_MESSAGE = "Connection is closed.";

/** Messages of errors a Redis Cluster gives while a failover or a resharding is under way. */
const CLUSTER_TRANSIENT =
  /Too many Cluster redirections|\b(CLUSTERDOWN|TRYAGAIN|MOVED|ASK|LOADING|MASTERDOWN)\b|Connection is closed|Failed to refresh slots cache|\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)\b/;

/**
 * How a foreign error (ioredis', or Redis' reply) failed: the one place Yiem reads Redis' error
 * text and codes, since Redis tells them apart by message only.
 */
function failureOf(err: unknown): RedisFailure {
  if (!(err instanceof Error)) return "command";
  const code = (err as NodeJS.ErrnoException).code;
  if (
    (code !== undefined && CONNECTION_ERROR_CODES.has(code)) ||
    err.message === CONNECTION_CLOSED_MESSAGE
  )
    return "unreachable";
  if (CLUSTER_TRANSIENT.test(err.message)) return "failover";
  if (/^OOM\b/.test(err.message)) return "out-of-memory";
  if (/^NOPERM\b/.test(err.message)) return "not-permitted";
  return "command";
}

/**
 * Turns an error a Redis command (ioredis, or BullMQ's Redis calls) threw into a Yiem error: a
 * `RedisCommandError` saying how it failed, whose `retry` a caller reads instead of the text.
 * A `YiemError` is returned as it is. Never throws; never changes `err`.
 *
 * @example classifyRedisError(new Error("OOM command not allowed when used memory > 'maxmemory'.")) // RedisCommandError { failure: "out-of-memory", retry: "transient" }
 */
export function classifyRedisError(err: unknown): YiemError {
  return err instanceof YiemError ? err : new RedisCommandError(failureOf(err), err);
}

/** How `err` failed, when it is a Redis command's failure; `undefined` for another Yiem error. */
function redisFailureOf(err: unknown): RedisFailure | undefined {
  const typed = classifyRedisError(err);
  return typed instanceof RedisCommandError ? typed.failure : undefined;
}

/**
 * True for an error that only says Redis is out of reach (refused, reset, timed out, closed):
 * `watchRedis` reports those once per outage, so other listeners log them at debug level.
 * Never true for a command's own failure (`OOM`, `NOPERM`, a script error).
 */
export function isConnectionError(err: unknown): boolean {
  return redisFailureOf(err) === "unreachable";
}

/**
 * Whether `err` says Redis is away for a moment (`unreachable`, a cluster's `failover`) rather
 * than that the command is wrong: what `retryTransient` retries by default. Redis out of memory
 * passes too but may last, so it is left to `isPassingRedisError`. A Yiem error counts when
 * its `retry` is `transient`.
 */
export function isTransientRedisError(err: unknown): boolean {
  const failure = redisFailureOf(err);
  if (failure === undefined) return isTransient(err);
  return failure === "unreachable" || failure === "failover";
}

/**
 * Whether `err` passes by itself (`retry: "transient"` once classified): Redis away for a
 * moment (`isTransientRedisError`), or refusing writes while out of memory under `noeviction`,
 * which ends once memory is freed. A command that failed so is worth sending again.
 */
export function isPassingRedisError(err: unknown): boolean {
  return isTransient(classifyRedisError(err));
}
