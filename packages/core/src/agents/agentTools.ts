import type { AgentTool } from "../types/index.js";

/**
 * The tools one agent sees: a live view of a coordinator's tool map (its own tools, tools
 * workers announce, MCP tools, tools written later) narrowed to the agent's names. The model
 * is offered only these, and a call to any other tool finds none ("tool not found", listing
 * these). Nothing is copied: a tool registered later appears when its name is on the list.
 *
 * @example new AgentToolView(store.tools, new Set(["getTime"])).has("bash") // false
 */
export class AgentToolView extends Map<string, AgentTool> {
  constructor(
    private readonly all: Map<string, AgentTool>,
    private readonly names: ReadonlySet<string>,
  ) {
    super();
  }

  override get(name: string): AgentTool | undefined {
    return this.names.has(name) ? this.all.get(name) : undefined;
  }

  override has(name: string): boolean {
    return this.names.has(name) && this.all.has(name);
  }

  override get size(): number {
    return [...this.entries()].length;
  }

  override *entries(): MapIterator<[string, AgentTool]> {
    for (const entry of this.all) if (this.names.has(entry[0])) yield entry;
  }

  override *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  override *values(): MapIterator<AgentTool> {
    for (const [, tool] of this.entries()) yield tool;
  }

  override [Symbol.iterator](): MapIterator<[string, AgentTool]> {
    return this.entries();
  }

  override forEach(
    callback: (value: AgentTool, key: string, map: Map<string, AgentTool>) => void,
    thisArg?: unknown,
  ): void {
    for (const [name, tool] of this.entries()) callback.call(thisArg, tool, name, this);
  }
}

/** The tools of an agent: every tool when it names none, else the view of its names. */
export function toolsOfAgent(
  all: Map<string, AgentTool>,
  names: readonly string[] | undefined,
): Map<string, AgentTool> {
  return names === undefined ? all : new AgentToolView(all, new Set(names));
}
