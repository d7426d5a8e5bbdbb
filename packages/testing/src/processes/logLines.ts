import type { TestProcess } from "./processes.js";

/** A parsed pino line. */
export type LogEntry = Record<string, unknown> & { level: number; msg: string };

/** pino's numeric levels. */
export const LOG_LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** The pino lines of `process` whose `msg` is `message`, parsed (lines that are not JSON are skipped). */
export function logEntries(process: TestProcess, message: string): LogEntry[] {
  return process.lines.flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      const entry = JSON.parse(line) as LogEntry;
      return entry.msg === message ? [entry] : [];
    } catch {
      return [];
    }
  });
}
