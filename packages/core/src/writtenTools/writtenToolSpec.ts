import { createHash } from "node:crypto";
import { canonicalJson } from "../tools/canonicalJson.js";
import { validateRequiredArgs } from "../tools/validateArguments.js";
import type { WrittenToolDefinition, WrittenToolSpec } from "./writtenToolTypes.js";

/** Names a written tool may have. */
export const WRITTEN_TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Longest body, label, description and input schema (as JSON) accepted, in characters. */
export const WRITTEN_TOOL_LIMITS = {
  code: 64 * 1024,
  label: 200,
  description: 4000,
  inputSchema: 64 * 1024,
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The spec fields of a spec or definition, nothing else. */
export function specOf(spec: WrittenToolSpec): WrittenToolSpec {
  const { name, label, description, inputSchema, code, parallel } = spec;
  return { name, label, description, inputSchema, code, parallel };
}

/** sha256 (hex) of the canonical JSON of the spec: equal content, equal hash. */
export function hashWrittenTool(spec: WrittenToolSpec): string {
  return createHash("sha256")
    .update(canonicalJson(specOf(spec)))
    .digest("hex");
}

function hasKeyDeep(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((item) => hasKeyDeep(item, key));
  if (!isRecord(value)) return false;
  return Object.keys(value).some((k) => k === key || hasKeyDeep(value[k], key));
}

function describeInvalidSchema(schema: unknown): string | undefined {
  if (!isRecord(schema) || schema.type !== "object") {
    return 'inputSchema must be a JSON Schema object with type "object"';
  }
  if (JSON.stringify(schema).length > WRITTEN_TOOL_LIMITS.inputSchema) {
    return `inputSchema is longer than ${WRITTEN_TOOL_LIMITS.inputSchema} characters`;
  }
  // Each process compiles the schema once per version; a `$id` would clash on the second one.
  if (hasKeyDeep(schema, "$id")) return "inputSchema must not use $id";
  const problem = validateRequiredArgs({}, schema);
  return problem?.startsWith("the tool's input schema is invalid") ? problem : undefined;
}

function describeInvalidText(spec: Partial<Record<string, unknown>>): string | undefined {
  if (typeof spec.name !== "string" || !WRITTEN_TOOL_NAME.test(spec.name)) {
    return "name must be an identifier: a letter or _, then letters, digits or _ (at most 64)";
  }
  for (const field of ["label", "description", "code"] as const) {
    const value = spec[field];
    if (typeof value !== "string" || value.trim() === "")
      return `${field} must be a non-empty string`;
    if (value.length > WRITTEN_TOOL_LIMITS[field]) {
      return `${field} is longer than ${WRITTEN_TOOL_LIMITS[field]} characters`;
    }
  }
  return typeof spec.parallel === "boolean" ? undefined : "parallel must be a boolean";
}

/**
 * What is wrong with a spec (name, texts, sizes, input schema that compiles with the repo's
 * validator), or `undefined` when it is valid. Never throws. The code's syntax is checked
 * separately, in the sandbox (`checkSandboxCode`).
 */
export function describeInvalidSpec(spec: unknown): string | undefined {
  if (!isRecord(spec)) return "a written tool must be an object";
  return describeInvalidText(spec) ?? describeInvalidSchema(spec.inputSchema);
}

/** Parses a stored definition; `undefined` when it is not one. Never throws. */
export function parseDefinition(text: string): WrittenToolDefinition | undefined {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (describeInvalidText(value) !== undefined || !isRecord(value.inputSchema)) return undefined;
    if (typeof value.hash !== "string" || typeof value.writtenAt !== "string") return undefined;
    if (!Number.isInteger(value.version)) return undefined;
    return value as unknown as WrittenToolDefinition;
  } catch {
    return undefined;
  }
}
