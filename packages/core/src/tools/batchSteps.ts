import { inSpan, markSpanError } from "../tracing/spans.js";
import type {
  AgentContext,
  AgentLoopConfig,
  AgentToolCall,
  AssistantMessage,
  EmitFn,
  ExecutedOutcome,
  FinalizedOutcome,
  ImmediateOutcome,
  PreparedToolCall,
  ToolExecutionMode,
  ToolExecutor,
} from "../types/index.js";
import { emitSafely } from "./emitSafely.js";
import { executePreparedToolCall } from "./executePreparedToolCall.js";
import { emitToolExecutionEnd, finalizeExecutedToolCall } from "./finalizeExecutedToolCall.js";
import { ABORTED_MESSAGE, prepareToolCall } from "./prepareToolCall.js";
import { createErrorToolResult, describeError } from "./toolResults.js";

/** The error text of a call that needs approval where no one can give it (no cluster). */
export const NO_APPROVAL_MESSAGE = "this call requires approval, which only a cluster can ask for";

/**
 * The in-process executor: runs `executePreparedToolCall` here. A call that needs approval
 * never runs here: it gets an error result (approvals need a cluster's durable state).
 */
export const localToolExecutor: ToolExecutor = {
  execute: async (prepared, signal, emit) =>
    prepared.approval
      ? {
          result: createErrorToolResult(`${prepared.tool.name}: ${NO_APPROVAL_MESSAGE}`),
          isError: true,
        }
      : executePreparedToolCall(prepared, signal, emit),
};

/** Everything one batch's steps share. */
export interface BatchScope {
  context: AgentContext;
  assistantMessage: AssistantMessage;
  config: AgentLoopConfig;
  signal: AbortSignal | undefined;
  emit: EmitFn;
  mode: ToolExecutionMode;
}

/** Emits `toolExecStart` for a call, then prepares it (the YiemAgent lifecycle's order). */
export async function startAndPrepare(
  scope: BatchScope,
  toolCall: AgentToolCall,
): Promise<PreparedToolCall | ImmediateOutcome> {
  await emitSafely(scope.emit, {
    type: "toolExecStart",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    arguments: toolCall.arguments,
  });
  return prepareToolCall(
    scope.context,
    scope.assistantMessage,
    toolCall,
    scope.config,
    scope.signal,
  );
}

/** Runs a prepared call in a `yiem.tool_call` span (remote calls carry it to their worker). */
function executeOnExecutor(scope: BatchScope, prep: PreparedToolCall): Promise<ExecutedOutcome> {
  const attributes = { "yiem.tool": prep.tool.name, "yiem.tool_call_id": prep.toolCall.id };
  return inSpan("yiem.tool_call", { attributes }, async (span) => {
    const outcome = await executeUntraced(scope, prep);
    if (outcome.isError) markSpanError(span, "the call's result is an error");
    return outcome;
  });
}

/** Runs a prepared call on the configured executor; an executor that throws yields an error result. */
async function executeUntraced(
  scope: BatchScope,
  prep: PreparedToolCall,
): Promise<ExecutedOutcome> {
  const executor = scope.config.executor ?? localToolExecutor;
  try {
    return await executor.execute(prep, scope.signal, scope.emit, { mode: scope.mode });
  } catch (err) {
    return {
      result: createErrorToolResult(`${prep.tool.name}: ${describeError(err)}`),
      isError: true,
    };
  }
}

/** Executes and finalizes a prepared call, then emits its end event. Never throws. */
export async function executeAndFinalize(
  scope: BatchScope,
  prep: PreparedToolCall,
): Promise<FinalizedOutcome> {
  const executed = await executeOnExecutor(scope, prep);
  const finalized = await finalizeExecutedToolCall(
    scope.context,
    scope.assistantMessage,
    prep,
    executed,
    scope.config,
    scope.signal,
  );
  await emitToolExecutionEnd(finalized, scope.emit);
  return finalized;
}

/** Ends a call that did not get past preparation, with its end event. */
export async function finishImmediate(
  scope: BatchScope,
  toolCall: AgentToolCall,
  outcome: ImmediateOutcome,
): Promise<FinalizedOutcome> {
  const finalized = { toolCall, result: outcome.result, isError: outcome.isError };
  await emitToolExecutionEnd(finalized, scope.emit);
  return finalized;
}

/** A call skipped because the run was aborted: start and end events, "Operation aborted". */
export async function skipAborted(
  scope: BatchScope,
  toolCall: AgentToolCall,
): Promise<FinalizedOutcome> {
  await emitSafely(scope.emit, {
    type: "toolExecStart",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    arguments: toolCall.arguments,
  });
  const aborted: ImmediateOutcome = {
    kind: "immediate",
    result: createErrorToolResult(ABORTED_MESSAGE),
    isError: true,
  };
  return finishImmediate(scope, toolCall, aborted);
}
