import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import type { FromSchema, JSONSchema } from "json-schema-to-ts";
import type { JsonSchema, ToolArgs } from "../types/index.js";

/**
 * A Standard Schema that can also write itself out as JSON Schema (the "Standard JSON
 * Schema" interface, `~standard.jsonSchema`): zod ≥ 4.2 schemas as they are, valibot
 * through `toStandardJsonSchema`, arktype types, and any other library implementing both.
 */
export type StandardToolSchema<Input = unknown, Output = Input> = StandardSchemaV1<Input, Output> &
  StandardJSONSchemaV1<Input, Output>;

/**
 * What `defineTool`'s `parameters` may be: a Standard Schema with JSON Schema output (see
 * `StandardToolSchema`), or a plain JSON Schema object of `type: "object"` (typed when it is
 * a literal or `as const`). A Standard Schema without `~standard.jsonSchema` is neither.
 */
export type ToolParameters =
  | StandardToolSchema
  | (JSONSchema & { readonly "~standard"?: undefined })
  | (JsonSchema & { readonly "~standard"?: undefined });

/**
 * The arguments `execute` gets for `parameters` of type `P`: a Standard Schema's output
 * type, `FromSchema<P>` for a literal JSON Schema, plain `ToolArgs` for a JSON Schema only
 * known as `JsonSchema` (or one `FromSchema` cannot make an object type of).
 */
export type ToolArgsOf<P> = P extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<P>
  : P extends JSONSchema
    ? FromSchema<P> extends infer Args
      ? Args extends object
        ? Args
        : ToolArgs
      : ToolArgs
    : ToolArgs;

/** Whether `parameters` is a Standard Schema (it has a `~standard` object with `validate`). */
export function isStandardSchema(parameters: unknown): parameters is StandardSchemaV1 {
  if (typeof parameters !== "object" && typeof parameters !== "function") return false;
  const standard = (parameters as { "~standard"?: { validate?: unknown } } | null)?.["~standard"];
  return typeof standard?.validate === "function";
}

/**
 * The JSON Schema the model sees for a Standard Schema: its input side as draft-07 (what the
 * project's ajv compiles), without `$schema`. Throws an `Error` naming the tool when the
 * library cannot convert it (no `~standard.jsonSchema`, or a type JSON Schema has no word
 * for, e.g. a zod `z.date()`).
 */
export function jsonSchemaOfStandard(toolName: string, schema: StandardSchemaV1): JsonSchema {
  const converter = (schema as Partial<StandardToolSchema>)["~standard"]?.jsonSchema;
  if (typeof converter?.input !== "function") {
    throw new Error(
      `defineTool "${toolName}": parameters is a Standard Schema (${schema["~standard"].vendor}) without ~standard.jsonSchema; use a library version that implements Standard JSON Schema (zod >= 4.2) or a plain JSON Schema`,
    );
  }
  let converted: Record<string, unknown>;
  try {
    converted = converter.input({ target: "draft-07" });
  } catch (err) {
    throw new Error(
      `defineTool "${toolName}": parameters cannot be written as JSON Schema: ${(err as Error).message}`,
    );
  }
  const { $schema: _dialect, ...jsonSchema } = converted;
  return jsonSchema;
}

/** One Standard Schema issue as `"path.to.field" message` (`"arguments"` with no path). */
function describeIssue(issue: StandardSchemaV1.Issue): string {
  const keys = (issue.path ?? []).map((segment) =>
    typeof segment === "object" ? segment.key : segment,
  );
  const field = keys.length > 0 ? keys.map(String).join(".") : "arguments";
  return `"${field}" ${issue.message}`;
}

/** A failed validation's issues as one text in the shape of the ajv validator's. */
export function describeIssues(issues: readonly StandardSchemaV1.Issue[]): string {
  return `invalid arguments: ${[...new Set(issues.map(describeIssue))].join("; ")}`;
}

/** What one Standard Schema validation gave: the (possibly transformed) value, or an error text. */
export type StandardValidation = { ok: true; value: unknown } | { ok: false; error: string };

/** Turns one `~standard.validate` result into a `StandardValidation`. */
export function toValidation(result: StandardSchemaV1.Result<unknown>): StandardValidation {
  if (result.issues) return { ok: false, error: describeIssues(result.issues) };
  return { ok: true, value: result.value };
}
