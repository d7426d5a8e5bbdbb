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

/**
 * True for an error that only says Redis is out of reach (refused, reset, timed out, closed):
 * `watchRedis` reports those once per outage, so other listeners log them at debug level.
 * Never true for a command's own failure (`OOM`, `NOPERM`, a script error).
 */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  return (
    (code !== undefined && CONNECTION_ERROR_CODES.has(code)) ||
    err.message === CONNECTION_CLOSED_MESSAGE
  );
}

/** Messages of errors a Redis Cluster gives while a failover or a resharding is under way. */
const CLUSTER_TRANSIENT =
  /Too many Cluster redirections|\b(CLUSTERDOWN|TRYAGAIN|MOVED|ASK|LOADING|MASTERDOWN)\b|Connection is closed|Failed to refresh slots cache|\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)\b/;

/**
 * Whether `err` says Redis is away for a moment (a lost connection, a cluster failing over)
 * rather than that the command is wrong.
 */
export function isTransientRedisError(err: unknown): boolean {
  if (isConnectionError(err)) return true;
  return err instanceof Error && CLUSTER_TRANSIENT.test(err.message);
}

/**
 * Whether `err` passes by itself: a transient error (`isTransientRedisError`), or Redis
 * refusing writes while out of memory under `noeviction` (`OOM command not allowed…`), which
 * ends once memory is freed. A command that failed so is worth sending again.
 */
export function isPassingRedisError(err: unknown): boolean {
  return isTransientRedisError(err) || (err instanceof Error && /^OOM\b/.test(err.message));
}
