import type { AgentTool } from "../types/index.js";
import { describeBadToolNaming, InvalidToolError } from "./toolNames.js";

/**
 * A `Map` that counts its changes (`set`, `delete`, `clear`), so a reader can tell whether it
 * changed without comparing it (see `ToolStore.revision`).
 */
class CountingMap<K, V> extends Map<K, V> {
  changes = 0;

  override set(key: K, value: V): this {
    this.changes = (this.changes ?? 0) + 1; // `Map`'s constructor may call set before fields exist
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    const deleted = super.delete(key);
    if (deleted) this.changes += 1;
    return deleted;
  }

  override clear(): void {
    this.changes += 1;
    super.clear();
  }
}

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
  readonly tools: Map<string, AgentTool> = new CountingMap<string, AgentTool>();
  /** A name for logs and debugging. */
  readonly name: string;

  constructor(options: { name: string }) {
    this.name = options.name;
  }

  /**
   * Goes up by at least one with every change to `tools` (a tool registered, replaced or
   * removed, through `registerTool` or the map itself), so a process that announces or caches
   * the store's tools knows when to look again. Starts at 0.
   */
  get revision(): number {
    return (this.tools as CountingMap<string, AgentTool>).changes;
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
