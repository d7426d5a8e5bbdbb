import { type Logger, pino } from "pino";

/** Paths pino replaces with `[redacted]` in every Yiem log line. */
export const REDACTED_PATHS = [
  "apiKey",
  "*.apiKey",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "redisUrl",
  "*.redisUrl",
  "openaiApiKey",
  "*.openaiApiKey",
];

/**
 * A pino JSON logger with secrets redacted (API keys, passwords, authorization headers,
 * Redis URLs that may carry a password).
 *
 * @example const log = createLogger("tool-worker", "info"); log.info({ workerId }, "started");
 */
export function createLogger(name: string, level = "info"): Logger {
  return pino({ name, level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } });
}

/** A logger that writes nothing (the default when none is given). */
export const silentLogger: Logger = pino({ level: "silent" });

export type { Logger };
