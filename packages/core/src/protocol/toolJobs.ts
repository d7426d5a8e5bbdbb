import { createHash } from "node:crypto";
import type { AgentToolResult, ToolArgs } from "../types/index.js";

/** What a tool job carries to a worker. No secrets: only the call and where it belongs. */
export interface ToolJobData {
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  /**
   * The prepared, validated arguments the tool runs with (one copy: a worker's
   * `toolExecUpdate` events carry these too; the model's own are in the transcript).
   */
  args: ToolArgs;
  /** How many times the call may be tried again after its worker died. */
  retries: number;
  /**
   * Set when `args` are the model's own and the worker runs the tool's `prepareArguments`
   * and validation before executing: a worker-only tool (announced, not loaded on the
   * coordinator) with its own `prepareArguments` or `validateRequiredArgs`, which the
   * coordinator cannot run (docs/ARCHITECTURE.md, "Where tools run").
   */
  prepareOnWorker?: true;
  /**
   * How many workers that lack the tool have handed this job back to the queue (a worker-only
   * tool that only some workers of its queue have). Set by workers; never by coordinators.
   */
  handoffs?: number;
  /** The caller's trace context (W3C `traceparent`), present only when tracing is on. */
  trace?: Record<string, string>;
}

/**
 * What a worker returns for a tool job: tool failures are results too. A job fails only when
 * it was aborted (`ABORTED_JOB_REASON`) or refused as a second run of a finished call.
 */
export interface ToolJobResult {
  result: AgentToolResult;
  isError: boolean;
  workerId: string;
  durationMs: number;
}

const UNSAFE = /[^A-Za-z0-9_-]/g;
const PLAIN = /^[A-Za-z0-9_-]+$/;

/**
 * The job id of a tool call: derived from session, run and call key (see `AgentToolCall.key`),
 * so dispatching the same call again (after a coordinator crash) attaches to the job that
 * exists instead of running the call twice. Distinct calls never share an id: parts with
 * other characters than letters, digits, `_` and `-` are replaced and a hash of the exact
 * parts is appended, so `c:1` and `c/1` stay apart. Never contains `:` and is never all
 * digits (BullMQ reserves both). Long ids are shortened with a hash so keys stay small.
 *
 * @example toolJobId("s1", "r1", "call_7") // "s1.r1.call_7"
 */
export function toolJobId(sessionId: string, runId: string, callKey: string): string {
  const parts = [sessionId, runId, callKey];
  const joined = parts.map((part) => part.replace(UNSAFE, "_")).join(".");
  const digest = () => createHash("sha256").update(parts.join("\n")).digest("hex");
  if (joined.length > 160) return `${joined.slice(0, 80)}.${digest().slice(0, 32)}`;
  if (parts.every((part) => PLAIN.test(part))) return joined;
  return `${joined}.${digest().slice(0, 16)}`;
}

/** The `failedReason` of a tool job whose session was aborted while it ran. */
export const ABORTED_JOB_REASON = "aborted";
