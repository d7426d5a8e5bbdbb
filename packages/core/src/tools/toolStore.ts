import type { AgentTool } from "../types/index.js";
import { describeBadToolNaming, InvalidToolError } from "./toolNames.js";

/**
 * A per-agent tool registry: an insertion-ordered `Map` keyed by tool name. Stores are fully
 * isolated; registering in one never affects another.
 *
 * @example
 * const store = new ToolStore({ name: "weatherAgent" });
 * registerTool(store, getWeatherTool);
 * getTools(store).get("getWeather");
 */
export class ToolStore {
  /** The live map; `getTools` returns it directly, not a copy. */
  readonly tools = new Map<string, AgentTool>();
  /** A name for logs and debugging. */
  readonly name: string;

  constructor(options: { name: string }) {
    this.name = options.name;
  }
}

/**
 * Adds a tool to the store; a tool with the same name is replaced in place (order kept).
 * Throws `InvalidToolError`, naming the tool, for a name the OpenAI API would refuse
 * (`^[a-zA-Z0-9_-]{1,64}$`) or a `queue` that is no usable queue name
 * (`^[a-zA-Z0-9_.-]{1,64}$`: a `:` would stop a coordinator or worker at start), and leaves
 * the store as it was.
 */
export function registerTool(store: ToolStore, tool: AgentTool): void {
  const problem = describeBadToolNaming(tool);
  if (problem) throw new InvalidToolError(String(tool.name), `${problem}; store "${store.name}"`);
  store.tools.set(tool.name, tool);
}

/** The store's live, insertion-ordered map; mutating it mutates the store. */
export function getTools(store: ToolStore): Map<string, AgentTool> {
  return store.tools;
}

/** Removes every tool from this store only. */
export function clearTools(store: ToolStore): void {
  store.tools.clear();
}
