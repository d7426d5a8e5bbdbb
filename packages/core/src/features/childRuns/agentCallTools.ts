import type { AgentDefinition } from "../../agents/defineAgent.js";
import { LiveToolMap } from "../../agents/liveToolMap.js";
import type { AgentTool, JsonSchema } from "../../types/index.js";

/** What the tool calling agent `<name>` is named: `agent__<name>`. */
export const AGENT_TOOL_PREFIX = "agent__";

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
  return {
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
}

/** The agent a tool calls when it is an agent's tool (`agent__<name>`), else `undefined`. */
export function calledAgentOf(tool: Pick<AgentTool, "name">): string | undefined {
  return tool.name.startsWith(AGENT_TOOL_PREFIX)
    ? tool.name.slice(AGENT_TOOL_PREFIX.length)
    : undefined;
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
