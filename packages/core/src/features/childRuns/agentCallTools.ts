import type { AgentDefinition } from "../../agents/defineAgent.js";
import { LiveToolMap } from "../../agents/liveToolMap.js";
import { AGENT_TOOL_PREFIX } from "../../tools/toolNames.js";
import type { AgentTool, JsonSchema } from "../../types/index.js";

/**
 * The mark of a tool `agentCallTool` made: the agent it calls. A symbol of this module only,
 * so no tool file, MCP server or worker can make a tool that counts as an agent call (copies
 * of the tool keep it: spreading an object copies its symbol keys).
 */
const CALLED_AGENT = Symbol("yiem.calledAgent");

/** A tool made by `agentCallTool`. */
type AgentCallTool = AgentTool & { [CALLED_AGENT]?: string };

/** The parameters of an agent's tool when the agent declares no `inputSchema`. */
const PLAIN_INPUT: JsonSchema = {
  type: "object",
  properties: { input: { type: "string", description: "What to ask the agent" } },
  required: ["input"],
};

/** The text an agent call's tool answers with where no coordinator runs it as a child run. */
const NOT_IN_CLUSTER = "agent calls run as child runs on a coordinator only";

/**
 * The tool that offers agent `callee` to the model of an agent that may call it: named
 * `agent__<name>`, with the callee's `description` and its `inputSchema` (else `{ input:
 * string }`). A coordinator runs a call of it as a child run of the callee (never through
 * `execute`, which only answers that it cannot run elsewhere).
 *
 * @example agentCallTool(writer).name // "agent__writer"
 */
export function agentCallTool(callee: AgentDefinition): AgentTool {
  const tool: AgentCallTool = {
    [CALLED_AGENT]: callee.name,
    name: `${AGENT_TOOL_PREFIX}${callee.name}`,
    label: `agent ${callee.name}`,
    description: callee.description ?? `Ask the agent "${callee.name}" and get its answer.`,
    inputSchema: callee.inputSchema ?? PLAIN_INPUT,
    // Parallel: the calls of one batch start their child runs side by side.
    parallelToolExecute: true,
    execute: () => {
      throw new Error(NOT_IN_CLUSTER);
    },
  };
  return tool;
}

/**
 * The agent a tool calls when `agentCallTool` made it, else `undefined`. Decided by the tool's
 * mark, never by its name: a tool of another source named `agent__<x>` (refused at load, see
 * `describeBadToolNaming`) would still never start a child run.
 */
export function calledAgentOf(tool: AgentTool): string | undefined {
  return (tool as AgentCallTool)[CALLED_AGENT];
}

/**
 * The input of a child run from a call's arguments: `input` as it is for the plain
 * parameters, else the arguments' JSON.
 *
 * @example childInputOf({ input: "Find X" }, undefined) // "Find X"
 */
export function childInputOf(args: Record<string, unknown>, inputSchema: unknown): string {
  if (inputSchema === undefined && typeof args.input === "string") return args.input;
  return JSON.stringify(args);
}

/**
 * A tool map with `extra` tools beside a live map (`base`, an agent's view of the store): the
 * agent's tools and its callable agents. `base` wins a name both have.
 */
export class ToolsWithExtras extends LiveToolMap {
  constructor(
    private readonly base: Map<string, AgentTool>,
    private readonly extra: ReadonlyMap<string, AgentTool>,
  ) {
    super();
  }

  override get(name: string): AgentTool | undefined {
    return this.base.get(name) ?? this.extra.get(name);
  }

  override has(name: string): boolean {
    return this.base.has(name) || this.extra.has(name);
  }

  override *entries(): MapIterator<[string, AgentTool]> {
    yield* this.base.entries();
    for (const [name, tool] of this.extra) if (!this.base.has(name)) yield [name, tool];
  }
}

/** `tools` with one `agent__<name>` tool per agent of `callees` (the map itself when none). */
export function withAgentCallTools(
  tools: Map<string, AgentTool>,
  callees: readonly AgentDefinition[],
): Map<string, AgentTool> {
  if (callees.length === 0) return tools;
  const extra = callees.map((callee): [string, AgentTool] => {
    const tool = agentCallTool(callee);
    return [tool.name, tool];
  });
  return new ToolsWithExtras(tools, new Map(extra));
}
