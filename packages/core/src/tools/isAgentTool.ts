import type { AgentTool } from "../types/index.js";
import { describeBadToolNaming } from "./toolNames.js";

/**
 * Checks that a value has the shape of an `AgentTool`; returns what is wrong, or nothing.
 * Used on whatever a tool file gave (its `getTool()` or its default export).
 */
export function describeInvalidTool(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "the tool is not an object";
  const tool = value as Partial<Record<keyof AgentTool, unknown>>;
  for (const field of ["name", "label", "description"] as const) {
    if (typeof tool[field] !== "string" || tool[field] === "") {
      return `tool.${field} must be a non-empty string`;
    }
  }
  const naming = describeBadToolNaming(tool);
  if (naming) return naming;
  if (typeof tool.inputSchema !== "object" || tool.inputSchema === null) {
    return "tool.inputSchema must be a JSON Schema object";
  }
  if (typeof tool.execute !== "function") return "tool.execute must be a function";
  for (const hook of ["prepareArguments", "validateRequiredArgs"] as const) {
    if (tool[hook] !== undefined && typeof tool[hook] !== "function") {
      return `tool.${hook} must be a function when present`;
    }
  }
  if (tool.overrides !== undefined && tool.overrides !== true) {
    return "tool.overrides must be true when present";
  }
  return undefined;
}
