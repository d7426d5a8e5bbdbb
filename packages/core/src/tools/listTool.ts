import type { AgentTool } from "../types/index.js";
import type { ToolStore } from "./toolStore.js";

/** The name under which `listTool` registers itself. */
export const LIST_TOOLS_NAME = "listTools";

/**
 * The `listTools` tool bound to one store (or any holder of a tool map, such as one agent's
 * view): it lists the tools as they are when it runs (tools registered later appear too), one
 * line each: `- name: label — description`.
 *
 * @example
 * registerTool(store, listTool(store));
 * // execute → "Available tools:\n- getTime: Time Lookup — Get the current time..."
 */
export function listTool(store: Pick<ToolStore, "tools">): AgentTool {
  return {
    name: LIST_TOOLS_NAME,
    label: "List Tools",
    description:
      "List every tool available to this agent with its label and description. Use it to discover tools and to avoid name collisions before creating one.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    parallelToolExecute: true,
    idempotent: true,
    execute: () => {
      const lines = [...store.tools.values()].map(
        (tool) => `- ${tool.name}: ${tool.label} — ${tool.description}`,
      );
      return {
        content: [{ type: "text", text: `Available tools:\n${lines.join("\n")}` }],
        details: { count: lines.length, names: [...store.tools.keys()] },
      };
    },
  };
}
