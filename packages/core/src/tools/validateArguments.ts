import { createRequire } from "node:module";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { JsonSchema, ToolArgs } from "../types/index.js";
import { canonicalJson } from "./canonicalJson.js";
import { validate as isValidDraft07Schema } from "./draft7MetaSchema.generated.js";

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Schema `pattern`s run on RE2 (linear time), so an argument string built to make a pattern
// backtrack cannot stall a coordinator. RE2 has no look-arounds or back-references; a schema
// that needs them is reported as invalid.
// RE2 is loaded at the first schema with a pattern: compiling its WebAssembly took about a
// tenth of a process's start, and most tools have no pattern.
type Re2Class = new (pattern: string, flags: string) => { test(input: string): boolean };
let RE2: Re2Class | undefined;
const re2Engine = Object.assign(
  (pattern: string, flags: string) => {
    RE2 ??= (createRequire(import.meta.url)("re2-wasm") as { RE2: Re2Class }).RE2;
    return new RE2(pattern, flags.includes("u") ? flags : `${flags}u`);
  },
  {
    code: 'require("re2-wasm").RE2',
  },
);

const ajv = new Ajv({
  allErrors: true,
  strict: false,
  coerceTypes: false,
  code: { regExp: re2Engine },
});
addFormats(ajv);

/**
 * `uniqueItems` in linear time. ajv compares items of objects pairwise (quadratic): one
 * 190 KB argument took 8 s and froze a coordinator. Here each item's canonical text goes into
 * a set once.
 */
function hasUniqueItems(this: unknown, schema: boolean, data: unknown[]): boolean {
  const validate = hasUniqueItems as typeof hasUniqueItems & { errors?: Partial<ErrorObject>[] };
  validate.errors = [];
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (const [i, item] of data.entries()) {
    const text = canonicalJson(item);
    const first = seen.get(text);
    if (first !== undefined) {
      validate.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${first} and ${i} are identical)`,
          params: { i: first, j: i },
        },
      ];
      return false;
    }
    seen.set(text, i);
  }
  return true;
}
ajv.removeKeyword("uniqueItems");
ajv.addKeyword({
  keyword: "uniqueItems",
  type: "array",
  schemaType: "boolean",
  errors: true,
  validate: hasUniqueItems,
});

/** The `$schema` of ajv's default meta-schema, draft-07 (with or without its empty fragment). */
const DRAFT_07 = new Set([
  "http://json-schema.org/draft-07/schema",
  "http://json-schema.org/draft-07/schema#",
]);

/**
 * Compiles `schema` as `ajv.compile` does, checking it against its meta-schema first, without
 * ajv compiling that meta-schema (some 40 ms of a process's start, at its first schema): a
 * draft-07 schema the generated validator (`draft7MetaSchema.generated.js`, ajv's standalone
 * code) finds valid is compiled without ajv's own check; any other goes through ajv's, so an
 * invalid schema fails with ajv's message as before.
 */
function compileChecked(schema: JsonSchema): ValidateFunction {
  const $schema = (schema as { $schema?: unknown }).$schema;
  const draft07 = $schema === undefined || DRAFT_07.has($schema as string);
  if (!draft07 || !isValidDraft07Schema(schema)) return ajv.compile(schema);
  const options = ajv.opts as { validateSchema?: boolean | "log" };
  const before = options.validateSchema;
  options.validateSchema = false;
  try {
    return ajv.compile(schema);
  } finally {
    options.validateSchema = before;
  }
}

/** Compiled validators, one per schema object (tools keep their schema for their lifetime). */
const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction | { invalidSchema: string } {
  const cached = compiled.get(schema);
  if (cached) return cached;
  try {
    const validate = compileChecked(schema);
    compiled.set(schema, validate);
    return validate;
  } catch (err) {
    return { invalidSchema: (err as Error).message };
  }
}

/**
 * Compiles a tool's input schema as calls will (the same ajv, cached for them); returns the
 * reason it is invalid (ajv's message), or nothing. `loadTools` refuses a tool with one.
 *
 * @example describeInvalidSchema({ type: "objekt" }) // "the tool's input schema is invalid: schema is invalid: data/type must be …"
 */
export function describeInvalidSchema(schema: JsonSchema): string | undefined {
  const validate = compile(schema);
  return "invalidSchema" in validate
    ? `the tool's input schema is invalid: ${validate.invalidSchema}`
    : undefined;
}

/** One ajv error as a sentence that names the field, e.g. `"city" is required`. */
function describeAjvError(error: ErrorObject, root: string): string {
  const field = error.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return `"${field ? `${field}.` : ""}${missing}" is required`;
  }
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return `"${field ? `${field}.` : ""}${extra}" is not an allowed property`;
  }
  return `"${field || root}" ${error.message ?? "is invalid"}`;
}

/**
 * How a value compares with a JSON Schema: `valid`; `invalid` with one sentence per
 * offending field (duplicates dropped); or `invalidSchema` when the schema does not compile.
 */
export type SchemaCheck =
  | { kind: "valid" }
  | { kind: "invalid"; errors: string[] }
  | { kind: "invalidSchema"; error: string };

/**
 * Checks `value` against `schema` with the shared ajv instance (every error, no coercion,
 * patterns on RE2, linear `uniqueItems`; validators compiled once per schema object). `root`
 * names the value itself in an error about it (`"arguments" must be object`). Never throws.
 *
 * @example checkAgainstSchema({}, { type: "object", required: ["city"] })
 * // { kind: "invalid", errors: ['"city" is required'] }
 */
export function checkAgainstSchema(
  value: unknown,
  schema: JsonSchema,
  root = "value",
): SchemaCheck {
  const validate = compile(schema);
  if (!(validate instanceof Function))
    return { kind: "invalidSchema", error: validate.invalidSchema };
  try {
    if (validate(value)) return { kind: "valid" };
  } catch (err) {
    return { kind: "invalid", errors: [`could not be validated (${(err as Error).message})`] };
  }
  const errors = (validate.errors ?? []).map((error) => describeAjvError(error, root));
  return { kind: "invalid", errors: [...new Set(errors)] };
}

/**
 * The default argument validator (lifecycle §8.1 step 3): full JSON Schema validation with ajv.
 * Returns one error text naming every offending field, or `undefined` when the arguments
 * are valid. Never throws; an invalid schema is reported as an error text.
 *
 * @example
 * validateRequiredArgs({}, { type: "object", required: ["city"] })
 * // 'invalid arguments: "city" is required'
 */
export function validateRequiredArgs(args: ToolArgs, inputSchema: JsonSchema): string | undefined {
  const check = checkAgainstSchema(args, inputSchema, "arguments");
  if (check.kind === "valid") return undefined;
  if (check.kind === "invalidSchema") return `the tool's input schema is invalid: ${check.error}`;
  if (check.errors[0]?.startsWith("could not be validated"))
    return `invalid arguments: ${check.errors[0]}`;
  return `invalid arguments: ${check.errors.join("; ")}`;
}
