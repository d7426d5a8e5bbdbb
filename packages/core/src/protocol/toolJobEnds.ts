import type { ToolJobResult } from "./toolJobs.js";

/**
 * How a tool job ended, as its worker announces it on the queue's `toolEndsChannel`: with its
 * result (the job completes), or with the reason it fails (an aborted call, a refused re-run,
 * an error outside the tool).
 */
export type ToolJobEnd =
  | { kind: "completed"; value: ToolJobResult }
  | { kind: "failed"; reason: string };

/**
 * The message announcing that job `jobId` ended: the id, a newline, the end as JSON (job ids
 * never hold a newline: `toolJobId` keeps them plain).
 *
 * @example toolJobEndMessage("s1.r1.call_1", { kind: "failed", reason: "aborted" })
 */
export function toolJobEndMessage(jobId: string, end: ToolJobEnd): string {
  return `${jobId}\n${JSON.stringify(end)}`;
}

/** Reads a `toolJobEndMessage`; `undefined` for any other text. Never throws. */
export function parseToolJobEnd(text: string): { jobId: string; end: ToolJobEnd } | undefined {
  const cut = text.indexOf("\n");
  if (cut <= 0) return undefined;
  try {
    const end = JSON.parse(text.slice(cut + 1)) as ToolJobEnd;
    if (end?.kind === "completed" && typeof end.value === "object" && end.value !== null)
      return { jobId: text.slice(0, cut), end };
    if (end?.kind === "failed" && typeof end.reason === "string")
      return { jobId: text.slice(0, cut), end };
    return undefined;
  } catch {
    return undefined;
  }
}
