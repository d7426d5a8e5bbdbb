import { type Logger, stdSerializers } from "pino";

/** Which call a tool error belongs to, for its log line. */
export interface ToolCallOrigin {
  tool: string;
  toolCallId: string;
  sessionId: string;
  runId: string;
}

/**
 * tsx runs TypeScript compiled to CommonJS as a `data:` module whose URL holds the whole
 * compiled source; its frames name the file instead (`?filePath=`, without tsx's query).
 */
const TSX_DATA_FRAME = /data:text\/javascript,[^\s]*?\?filePath=([^\s):]+)/g;

function nameTsxFrames(stack: string): string {
  return stack.replace(TSX_DATA_FRAME, (_frame, path: string) =>
    decodeURIComponent(path).replace(/\?.*$/, ""),
  );
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
  if (!(err instanceof Error)) {
    log.warn({ ...origin, err: { message: String(err) } }, "tool threw");
    return;
  }
  const serialized = stdSerializers.err(err);
  log.warn(
    { ...origin, err: { ...serialized, stack: nameTsxFrames(serialized.stack) } },
    "tool threw",
  );
}
