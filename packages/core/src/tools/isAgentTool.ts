import type { AgentTool } from "../types/index.js";

/**
 * Checks that a value has the shape of an `AgentTool`; returns what is wrong, or nothing.
 * Used on whatever a tool file's `getTool()` returned.
 */
export function describeInvalidTool(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "getTool() did not return an object";
  const tool = value as Partial<Record<keyof AgentTool, unknown>>;
  for (const field of ["name", "label", "description"] as const) {
    if (typeof tool[field] !== "string" || tool[field] === "") {
      return `tool.${field} must be a non-empty string`;
    }
  }
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(tool.name as string)) {
    return `tool.name "${String(tool.name)}" must be letters, digits, _ or - (at most 64)`;
  }
  if (typeof tool.inputSchema !== "object" || tool.inputSchema === null) {
    return "tool.inputSchema must be a JSON Schema object";
  }
  if (typeof tool.execute !== "function") return "tool.execute must be a function";
  for (const hook of ["prepareArguments", "validateRequiredArgs"] as const) {
    if (tool[hook] !== undefined && typeof tool[hook] !== "function") {
      return `tool.${hook} must be a function when present`;
    }
  }
  return undefined;
}
