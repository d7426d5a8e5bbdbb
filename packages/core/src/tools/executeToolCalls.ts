import type {
  AgentContext,
  AgentLoopConfig,
  AgentToolCall,
  AgentToolCallBatch,
  AssistantMessage,
  EmitFn,
  FinalizedOutcome,
  ToolExecutionMode,
} from "../types/index.js";
import {
  type BatchScope,
  executeAndFinalize,
  finishImmediate,
  skipAborted,
  startAndPrepare,
} from "./batchSteps.js";
import { createToolResultMessage, shouldTerminate } from "./toolResults.js";

function toBatch(outcomes: FinalizedOutcome[]): AgentToolCallBatch {
  return { messages: outcomes.map(createToolResultMessage), terminate: shouldTerminate(outcomes) };
}

function scopeOf(
  mode: ToolExecutionMode,
  context: AgentContext,
  assistantMessage: AssistantMessage,
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: EmitFn,
): BatchScope {
  return { context, assistantMessage, config, signal, emit, mode };
}

/**
 * How a batch must run (lifecycle §9): sequentially when the configuration says so or when any
 * known tool of the batch does not allow parallel execution; otherwise in parallel.
 */
export function batchMode(
  context: AgentContext,
  toolCalls: readonly AgentToolCall[],
  config: AgentLoopConfig,
): ToolExecutionMode {
  if (config.toolExecution === "sequential") return "sequential";
  const hasSequential = toolCalls.some((call) => {
    const tool = context.tools.get(call.name);
    return tool !== undefined && tool.parallelToolExecute !== true;
  });
  return hasSequential ? "sequential" : "parallel";
}

/**
 * Runs a batch one call at a time, in order (lifecycle §9). Once `signal` aborts, the calls left
 * get "Operation aborted" results, so every call still has exactly one result. Never throws.
 */
export async function executeToolCallsSequential(
  context: AgentContext,
  assistantMessage: AssistantMessage,
  toolCalls: readonly AgentToolCall[],
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: EmitFn,
): Promise<AgentToolCallBatch> {
  const scope = scopeOf("sequential", context, assistantMessage, config, signal, emit);
  const outcomes: FinalizedOutcome[] = [];
  for (const toolCall of toolCalls) {
    if (signal?.aborted) {
      outcomes.push(await skipAborted(scope, toolCall));
      continue;
    }
    const prep = await startAndPrepare(scope, toolCall);
    outcomes.push(
      prep.kind === "immediate"
        ? await finishImmediate(scope, toolCall, prep)
        : await executeAndFinalize(scope, prep),
    );
  }
  return toBatch(outcomes);
}

/**
 * Runs a batch concurrently (lifecycle §9): every call is prepared in order and set running as
 * soon as it is prepared; results and their messages come back in call order whatever the
 * completion order. Calls not yet prepared when `signal` aborts get "Operation aborted".
 * Never throws.
 */
export async function executeToolCallsParallel(
  context: AgentContext,
  assistantMessage: AssistantMessage,
  toolCalls: readonly AgentToolCall[],
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: EmitFn,
): Promise<AgentToolCallBatch> {
  const scope = scopeOf("parallel", context, assistantMessage, config, signal, emit);
  const entries: Array<Promise<FinalizedOutcome>> = [];
  for (const toolCall of toolCalls) {
    if (signal?.aborted) {
      entries.push(skipAborted(scope, toolCall));
      continue;
    }
    const prep = await startAndPrepare(scope, toolCall);
    entries.push(
      prep.kind === "immediate"
        ? finishImmediate(scope, toolCall, prep)
        : executeAndFinalize(scope, prep),
    );
  }
  return toBatch(await Promise.all(entries));
}

/**
 * Runs the tool calls of one assistant message (lifecycle §9 dispatcher) and returns their
 * result messages in call order with the batch's terminate flag (lifecycle §10). Never throws.
 *
 * @example
 * const batch = await executeToolCalls(context, assistantMessage, calls, config, signal, emit);
 * state.messages.push(...batch.messages);
 */
export function executeToolCalls(
  context: AgentContext,
  assistantMessage: AssistantMessage,
  toolCalls: readonly AgentToolCall[],
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  emit: EmitFn,
): Promise<AgentToolCallBatch> {
  const run =
    batchMode(context, toolCalls, config) === "sequential"
      ? executeToolCallsSequential
      : executeToolCallsParallel;
  return run(context, assistantMessage, toolCalls, config, signal, emit);
}
