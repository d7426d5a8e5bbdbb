import type {
  AgentContext,
  AgentLoopConfig,
  AgentTool,
  AgentToolCall,
  AssistantMessage,
  ImmediateOutcome,
  PreparedToolCall,
  ToolArgs,
} from "../types/index.js";
import { createErrorToolResult, describeError } from "./toolResults.js";
import { validateRequiredArgs } from "./validateArguments.js";

/** The text every aborted call gets. */
export const ABORTED_MESSAGE = "Operation aborted";

function immediateError(message: string): ImmediateOutcome {
  return { kind: "immediate", result: createErrorToolResult(message), isError: true };
}

function toolNotFound(toolCall: AgentToolCall, context: AgentContext): ImmediateOutcome {
  const available = [...context.tools.keys()].join(", ") || "none";
  return immediateError(`Tool "${toolCall.name}" not found. Available tools: ${available}`);
}

/** Runs the tool's `prepareArguments`; returns the new arguments or an error text. */
function prepareArguments(tool: AgentTool, args: ToolArgs): ToolArgs | string {
  if (!tool.prepareArguments) return args;
  try {
    const prepared = tool.prepareArguments(args);
    if (typeof prepared !== "object" || prepared === null || Array.isArray(prepared)) {
      return `${tool.name}: prepareArguments did not return an object`;
    }
    return prepared;
  } catch (err) {
    return `${tool.name}: prepareArguments failed: ${describeError(err)}`;
  }
}

/** The tool's own validator when it has one, else full JSON Schema validation. */
function validateArguments(tool: AgentTool, args: ToolArgs): string | undefined {
  try {
    const problem = tool.validateRequiredArgs
      ? tool.validateRequiredArgs(args)
      : validateRequiredArgs(args, tool.inputSchema);
    return problem ? `${tool.name}: ${problem}` : undefined;
  } catch (err) {
    return `${tool.name}: argument validation failed: ${describeError(err)}`;
  }
}

/**
 * The argument steps of phase 1 (lifecycle §8.1) on their own: the tool's `prepareArguments`,
 * then its validation (its `validateRequiredArgs`, else JSON Schema). Returns the arguments
 * to run with, or the error text of the call's result. Never throws. A tool worker runs it
 * for a worker-only tool whose own functions the coordinator could not run
 * (`ToolJobData.prepareOnWorker`).
 */
export function prepareToolArguments(tool: AgentTool, args: ToolArgs): ToolArgs | string {
  const prepared = prepareArguments(tool, args);
  if (typeof prepared === "string") return prepared;
  return validateArguments(tool, prepared) ?? prepared;
}

/**
 * Phase 1 of a call (lifecycle §8.1): resolve the tool, `prepareArguments`, validate, then
 * `beforeToolCall` (`{block: true, reason}` blocks). A call that must wait for a human
 * decision (`approval: "always"`, or the hook's `requireApproval`) is prepared with its
 * `approval` reason set; the executor decides what that means. Never throws: every failure (malformed
 * arguments from the model, unknown tool, invalid arguments, a throwing hook, a block, an
 * abort) becomes an `ImmediateOutcome` with `isError: true`.
 */
export async function prepareToolCall(
  context: AgentContext,
  assistantMessage: AssistantMessage,
  toolCall: AgentToolCall,
  config: AgentLoopConfig,
  signal?: AbortSignal,
): Promise<PreparedToolCall | ImmediateOutcome> {
  if (signal?.aborted) return immediateError(ABORTED_MESSAGE);
  if (toolCall.argumentsError) return immediateError(toolCall.argumentsError);
  const tool = context.tools.get(toolCall.name);
  if (!tool) return toolNotFound(toolCall, context);
  const args = prepareArguments(tool, toolCall.arguments);
  if (typeof args === "string") return immediateError(args);
  const invalid = validateArguments(tool, args);
  if (invalid) return immediateError(invalid);
  if (config.beforeToolCall) {
    let before: Awaited<ReturnType<NonNullable<AgentLoopConfig["beforeToolCall"]>>>;
    try {
      before = await config.beforeToolCall({ assistantMessage, toolCall, args, context }, signal);
    } catch (err) {
      return immediateError(`${tool.name}: beforeToolCall failed: ${describeError(err)}`);
    }
    if (signal?.aborted) return immediateError(ABORTED_MESSAGE);
    if (before?.block) return immediateError(before.reason ?? "Tool execution was blocked");
    if (before?.requireApproval) {
      const reason = String(before.requireApproval.reason ?? "approval required");
      return { kind: "prepared", tool, toolCall, args, approval: { reason } };
    }
  }
  if (tool.approval === "always") {
    const approval = { reason: `${tool.name} always requires approval` };
    return { kind: "prepared", tool, toolCall, args, approval };
  }
  return { kind: "prepared", tool, toolCall, args };
}
