import type { AgentTool, ToolArgs, ToolExecuteFn } from "@yiem/core";
import { getBuiltinTools } from "@yiem/tools";

/** The lifecycle steps (§17) of one built-in tool, as its `getTool()` hands them to the store. */
export interface BuiltinToolSteps {
  tool: AgentTool;
  prepareArguments: (args: ToolArgs) => ToolArgs;
  validateRequiredArgs: (args: ToolArgs) => string | undefined;
  executeTool: ToolExecuteFn;
}

/**
 * The built-in tool `name` from `getBuiltinTools()` (the public way to get it), with its own
 * `prepareArguments` and `validateRequiredArgs`. Throws if there is no such tool or it lacks
 * one of the two.
 */
export function builtinTool(name: string): BuiltinToolSteps {
  const tool = getBuiltinTools().find((candidate) => candidate.name === name);
  if (!tool?.prepareArguments || !tool.validateRequiredArgs) {
    throw new Error(`no built-in tool ${name} with prepareArguments and validateRequiredArgs`);
  }
  return {
    tool,
    prepareArguments: tool.prepareArguments,
    validateRequiredArgs: tool.validateRequiredArgs,
    executeTool: tool.execute,
  };
}
