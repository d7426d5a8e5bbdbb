import { runInSandbox } from "../sandbox/runInSandbox.js";
import type { SandboxLimits } from "../sandbox/sandboxLimits.js";
import type { AgentTool } from "../types/index.js";
import type { WrittenToolDefinition } from "./writtenToolTypes.js";

/** The definition behind each tool made by `toAgentTool`. */
const definitions = new WeakMap<AgentTool, WrittenToolDefinition>();

/** The definition a tool was made from when it is a written tool; `undefined` for any other. */
export function writtenToolOf(tool: AgentTool): WrittenToolDefinition | undefined {
  return definitions.get(tool);
}

/**
 * The `AgentTool` of a written tool. Its `execute` runs the code in the sandbox
 * (`runInSandbox`, with `limits`) and never in this process; a sandbox failure is thrown as an
 * `Error` with the sandbox's message, which the pipeline turns into an error result. It runs
 * in parallel batches when the definition says `parallel`, and is never re-run after a crash
 * (`idempotent: false`). The run's signal kills the sandbox child.
 *
 * @example
 * registerTool(store, toAgentTool(definition, { timeoutMs: 1000 }));
 */
export function toAgentTool(
  definition: WrittenToolDefinition,
  limits: SandboxLimits = {},
): AgentTool {
  const tool: AgentTool = {
    name: definition.name,
    label: definition.label,
    description: definition.description,
    inputSchema: definition.inputSchema,
    parallelToolExecute: definition.parallel,
    idempotent: false,
    execute: async (toolCallId, args, signal) => {
      const outcome = await runInSandbox({
        ...limits,
        code: definition.code,
        args,
        toolName: definition.name,
        toolCallId,
        signal,
      });
      if (outcome.kind === "error") throw new Error(outcome.message);
      return outcome.result;
    },
  };
  definitions.set(tool, definition);
  return tool;
}
