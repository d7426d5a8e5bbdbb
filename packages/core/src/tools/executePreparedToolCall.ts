import type { AgentToolResult, EmitFn, ExecutedOutcome, PreparedToolCall } from "../types/index.js";
import { onAbort } from "./abortListener.js";
import { emitSafely } from "./emitSafely.js";
import { ABORTED_MESSAGE } from "./prepareToolCall.js";
import { createErrorToolResult, describeError } from "./toolResults.js";

function errorOutcome(message: string): ExecutedOutcome {
  return { result: createErrorToolResult(message), isError: true };
}

/** Checks what a tool returned; returns the result with defaults, or an error text. */
export function normalizeToolResult(toolName: string, value: unknown): AgentToolResult | string {
  if (typeof value !== "object" || value === null) {
    return `${toolName} returned no result object`;
  }
  const result = value as Partial<AgentToolResult>;
  if (!Array.isArray(result.content)) return `${toolName} returned a result without content`;
  return { ...result, content: result.content, details: result.details ?? {} };
}

/** Resolves when `signal` aborts; never rejects. */
function whenAborted(signal: AbortSignal): { promise: Promise<"aborted">; dispose: () => void } {
  let dispose: () => void = () => undefined;
  const promise = new Promise<"aborted">((resolve) => {
    dispose = onAbort(signal, () => resolve("aborted"));
  });
  return { promise, dispose };
}

/** The signal the tool sees: the run's signal, plus the tool's own timeout when it has one. */
function callSignal(prep: PreparedToolCall, signal?: AbortSignal): AbortSignal | undefined {
  const timeoutMs = prep.tool.timeoutMs;
  if (!timeoutMs) return signal;
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

function abortMessage(prep: PreparedToolCall, runSignal?: AbortSignal): string {
  if (runSignal?.aborted) return ABORTED_MESSAGE;
  return `${prep.tool.name} timed out after ${prep.tool.timeoutMs} ms`;
}

/**
 * Phase 2 of a call, in this process (lifecycle §8.2): runs `tool.execute`, turning each partial
 * result into a `toolExecUpdate` event until the call ends (later ones are dropped) and
 * waiting for every update to be emitted before returning. An abort of `signal` or the tool's
 * `timeoutMs` ends the call at once with an error result, even if the tool ignores its signal.
 * Never throws: a throw or an invalid result becomes an error outcome; a throw is handed to
 * `onToolError` first (a cluster process logs it there, with the call's context).
 */
export async function executePreparedToolCall(
  prep: PreparedToolCall,
  signal: AbortSignal | undefined,
  emit: EmitFn,
  onToolError?: (error: unknown) => void,
): Promise<ExecutedOutcome> {
  if (signal?.aborted) return errorOutcome(ABORTED_MESSAGE);
  const { toolCall } = prep;
  const toolSignal = callSignal(prep, signal);
  const updates: Promise<void>[] = [];
  let accepting = true;
  const onPartialResult = (partialResult: unknown) => {
    if (!accepting) return;
    updates.push(
      emitSafely(emit, {
        type: "toolExecUpdate",
        toolCallId: toolCall.id,
        toolName: toolCall.name,
        arguments: toolCall.arguments,
        partialResult,
      }),
    );
  };
  const run = (async () =>
    prep.tool.execute(toolCall.id, prep.args, toolSignal, onPartialResult))();
  const aborted = toolSignal ? whenAborted(toolSignal) : undefined;
  try {
    const value = await (aborted ? Promise.race([run, aborted.promise]) : run);
    if (value === "aborted") return errorOutcome(abortMessage(prep, signal));
    const result = normalizeToolResult(prep.tool.name, value);
    return typeof result === "string" ? errorOutcome(result) : { result, isError: false };
  } catch (err) {
    onToolError?.(err);
    return errorOutcome(describeError(err));
  } finally {
    aborted?.dispose();
    accepting = false;
    run.catch(() => undefined); // a tool that rejects after an abort must not go unhandled
    await Promise.all(updates);
  }
}
