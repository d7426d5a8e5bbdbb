import type { Logger } from "pino";

/** Which call a tool error belongs to, for its log line. */
export interface ToolCallOrigin {
  tool: string;
  toolCallId: string;
  sessionId: string;
  runId: string;
}

/**
 * Logs, at warn, an error a tool's `execute()` threw, on the process that ran it (a worker
 * for remote calls, the coordinator for in-process ones): `tool threw` with the call's tool,
 * call id, session and run, and the error (`err`: type, message, stack, its own fields) under
 * the logger's redaction list, so an `apiKey` or `password` field it carries is `[redacted]`.
 *
 * @example logToolError(log, { tool, toolCallId, sessionId, runId }, err)
 */
export function logToolError(log: Logger, origin: ToolCallOrigin, err: unknown): void {
  log.warn({ ...origin, err }, "tool threw");
}
