import { YiemError } from "@yiem/core/errors";
import { escapeControlChars } from "./terminalText.js";

/** Exit codes of `yiem`. */
export const EXIT = {
  ok: 0,
  /** The run ended with `stopReason` error or aborted, or no answer came in time. */
  runFailed: 1,
  /** Bad usage, bad configuration, Redis unreachable, no coordinator, an unknown session. */
  setup: 2,
  /** Stopped by Ctrl-C. */
  interrupted: 130,
} as const;

/** An error the CLI reports as one line (`yiem: <message>`) with its own exit code. Terminal. */
export class CliError extends YiemError {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Bad arguments: reported with the command's usage line, exit code 2. Terminal. */
export class UsageError extends CliError {
  override name = "UsageError";
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message, EXIT.setup);
  }
}

/** What a refused ACL user is told: which role each command needs. */
const ROLES_HINT =
  "Its ACL role does not allow this command: pending, approve and deny need the approver role; send, watch, abort and workers the client role (docs/SECURITY.md).";

/** The error `causeText` starts with: the first of an unnamed `AggregateError`, else `err`. */
function firstCause(err: unknown): unknown {
  return err instanceof AggregateError && !err.message ? err.errors[0] : err;
}

function causeText(err: unknown): string {
  if (err instanceof AggregateError && !err.message)
    return err.errors.map(causeText).filter(Boolean).join("; ");
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return err.message || (typeof code === "string" ? code : err.name);
}

/**
 * Turns any failure into the one-line message and exit code the CLI reports. Never a stack,
 * and never a raw control character: the messages it quotes (a server's, a session id) have
 * theirs escaped. Loads `@yiem/core/client` only for a failure that is not the CLI's own.
 */
export async function describeFailure(
  err: unknown,
): Promise<{ lines: string[]; exitCode: number }> {
  if (err instanceof UsageError) {
    const lines = [`yiem: ${escapeControlChars(err.message)}`, `usage: ${err.usage}`];
    return { lines, exitCode: err.exitCode };
  }
  if (err instanceof CliError)
    return { lines: [`yiem: ${escapeControlChars(err.message)}`], exitCode: err.exitCode };
  const { ConfigError, RedisUnavailableError, classifyRedisError, RedisCommandError } =
    await import("@yiem/core/client");
  if (err instanceof RedisUnavailableError) {
    const cause = escapeControlChars(causeText(err.cause) || "no answer").replace(/\.+$/, "");
    const target = escapeControlChars(err.target);
    const typed = classifyRedisError(firstCause(err.cause));
    const line =
      typed instanceof RedisCommandError && typed.failure === "not-permitted"
        ? `yiem: Redis at ${target} refused this user: ${cause}. ${ROLES_HINT}`
        : `yiem: Redis unreachable at ${target}: ${cause}. Set REDIS_URL or start redis-server.`;
    return { lines: [line], exitCode: EXIT.setup };
  }
  if (err instanceof ConfigError)
    return { lines: [`yiem: ${escapeControlChars(err.message)}`], exitCode: EXIT.setup };
  return { lines: [`yiem: ${escapeControlChars(causeText(err))}`], exitCode: EXIT.runFailed };
}
