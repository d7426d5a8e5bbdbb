import { LIST_TOOLS_NAME, listTool } from "../tools/listTool.js";
import type { AgentTool } from "../types/index.js";
import { LiveToolMap } from "./liveToolMap.js";

/**
 * The tools one agent sees: a live view of a coordinator's tool map (its own tools, tools
 * workers announce, MCP tools, tools written later) narrowed to the agent's names. The model
 * is offered only these, and a call to any other tool finds none ("tool not found", listing
 * these). Nothing is copied: a tool registered later appears when its name is on the list.
 * Its `listTools` lists the agent's tools only, and runs in the coordinator (not parallel), so
 * neither another agent's tools nor a worker's are named to this agent's model.
 *
 * @example new AgentToolView(store.tools, new Set(["getTime"])).has("bash") // false
 */
export class AgentToolView extends LiveToolMap {
  constructor(
    private readonly all: Map<string, AgentTool>,
    private readonly names: ReadonlySet<string>,
  ) {
    super();
  }

  /** This view's own `listTools`, made on first use. */
  private ownListTool: AgentTool | undefined;

  /** The agent's tool `name` of `tool` from the whole map: `listTools` becomes the view's own. */
  private narrow(name: string, tool: AgentTool): AgentTool {
    if (name !== LIST_TOOLS_NAME) return tool;
    this.ownListTool ??= { ...listTool({ tools: this }), parallelToolExecute: false };
    return this.ownListTool;
  }

  override get(name: string): AgentTool | undefined {
    const tool = this.names.has(name) ? this.all.get(name) : undefined;
    return tool && this.narrow(name, tool);
  }

  override has(name: string): boolean {
    return this.names.has(name) && this.all.has(name);
  }

  override *entries(): MapIterator<[string, AgentTool]> {
    for (const [name, tool] of this.all)
      if (this.names.has(name)) yield [name, this.narrow(name, tool)];
  }
}

/** The tools of an agent: every tool when it names none, else the view of its names. */
export function toolsOfAgent(
  all: Map<string, AgentTool>,
  names: readonly string[] | undefined,
): Map<string, AgentTool> {
  return names === undefined ? all : new AgentToolView(all, new Set(names));
}
