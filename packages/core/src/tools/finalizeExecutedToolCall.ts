import type {
  AgentContext,
  AgentLoopConfig,
  AgentToolResult,
  AssistantMessage,
  EmitFn,
  ExecutedOutcome,
  FinalizedOutcome,
  PreparedToolCall,
} from "../types/index.js";
import { emitSafely } from "./emitSafely.js";
import { createErrorToolResult, describeError } from "./toolResults.js";

/**
 * Phase 3 of a call (lifecycle §8.3): runs `afterToolCall`, whose returned fields (`content`,
 * `details`, `usage`, `terminate`, `isError`) replace the result's. Never throws: a throwing
 * hook turns the result into an error result.
 */
export async function finalizeExecutedToolCall(
  context: AgentContext,
  assistantMessage: AssistantMessage,
  prep: PreparedToolCall,
  executed: ExecutedOutcome,
  config: AgentLoopConfig,
  signal?: AbortSignal,
): Promise<FinalizedOutcome> {
  const { toolCall, args } = prep;
  if (!config.afterToolCall) return { toolCall, ...executed };
  const ranOn = executed.workerId ? { workerId: executed.workerId } : {};
  try {
    const after = await config.afterToolCall(
      {
        assistantMessage,
        toolCall,
        args,
        result: executed.result,
        isError: executed.isError,
        context,
      },
      signal,
    );
    if (!after) return { toolCall, ...executed };
    const result: AgentToolResult = { ...executed.result };
    if (after.content !== undefined) result.content = after.content;
    if (after.details !== undefined) result.details = after.details;
    if (after.usage !== undefined) result.usage = after.usage;
    if (after.terminate !== undefined) result.terminate = after.terminate;
    return { toolCall, result, isError: after.isError ?? executed.isError, ...ranOn };
  } catch (err) {
    const message = `${toolCall.name}: afterToolCall failed: ${describeError(err)}`;
    return { toolCall, result: createErrorToolResult(message), isError: true, ...ranOn };
  }
}

/**
 * Emits a call's `toolExecEnd` event (lifecycle §8.4), right after finalization; it names the
 * tool worker that ran the call when one did.
 */
export function emitToolExecutionEnd(finalized: FinalizedOutcome, emit: EmitFn): Promise<void> {
  return emitSafely(emit, {
    type: "toolExecEnd",
    toolCallId: finalized.toolCall.id,
    toolName: finalized.toolCall.name,
    result: finalized.result,
    isError: finalized.isError,
    ...(finalized.workerId ? { workerId: finalized.workerId } : {}),
  });
}
