import type { StandardSchemaV1 } from "@standard-schema/spec";
import type {
  AgentTool,
  AgentToolResult,
  JsonSchema,
  PartialResultCallback,
  ToolArgs,
  ToolExecuteFn,
} from "../types/index.js";
import { describeInvalidTool } from "./isAgentTool.js";
import {
  isStandardSchema,
  jsonSchemaOfStandard,
  type StandardValidation,
  type ToolArgsOf,
  type ToolParameters,
  toValidation,
} from "./toolParameters.js";
import { describeInvalidSchema, validateRequiredArgs } from "./validateArguments.js";

/** What a defined tool's `execute` gets besides its arguments. */
export interface ToolExecuteContext {
  /** The model's id for the call. */
  toolCallId: string;
  /** Aborts when the run is aborted or the call's `timeoutMs` passes. */
  signal: AbortSignal | undefined;
  /** Streams progress out; each call becomes a `toolExecUpdate` event. */
  onPartialResult: PartialResultCallback;
}

/**
 * What a defined tool's `execute` may return: a text (one text content, `details: {}`), or
 * an `AgentToolResult` whose `details` may be left out (`{}`).
 */
export type ToolReturn =
  | string
  | (Omit<AgentToolResult, "details"> & { details?: AgentToolResult["details"] });

/**
 * The argument of `defineTool`: an `AgentTool` whose `inputSchema` is `parameters`, whose
 * `execute` gets typed arguments first, and whose `label` is optional (default: the name).
 */
export interface ToolDefinition<P extends ToolParameters>
  extends Omit<AgentTool, "label" | "inputSchema" | "execute"> {
  /** Default: `name`. */
  label?: string;
  /** A zod (or other Standard JSON Schema) schema, or a JSON Schema of `type: "object"`. */
  parameters: P;
  /** The tool's code; `args` passed `parameters` (and `validateRequiredArgs`, when given). */
  execute: (args: ToolArgsOf<P>, context: ToolExecuteContext) => ToolReturn | Promise<ToolReturn>;
}

/** An `execute` result in the lifecycle's `AgentToolResult` shape; throws on anything else. */
function toAgentToolResult(toolName: string, value: ToolReturn): AgentToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }], details: {} };
  if (typeof value !== "object" || value === null || !Array.isArray(value.content)) {
    throw new Error(`${toolName}: execute must return a string or { content: [...] }`);
  }
  return { ...value, details: value.details ?? {} };
}

/** The validation of a schema that threw or rejected: the call's error, never the process's. */
function couldNotValidate(err: unknown): StandardValidation {
  const reason = err instanceof Error ? err.message : String(err);
  return { ok: false, error: `invalid arguments: could not be validated (${reason})` };
}

/**
 * Validates with the Standard Schema; a `Promise` when the schema validates asynchronously.
 * Never throws, and the promise never rejects: a schema that throws (a stack overflow, a
 * refinement that throws) gives a failed validation. zod answers a synchronous parse that
 * threw by trying again asynchronously, so a throw arrives as a rejected promise.
 */
function validateStandard(
  schema: StandardSchemaV1,
  args: ToolArgs,
): StandardValidation | Promise<StandardValidation> {
  try {
    const result = schema["~standard"].validate(args);
    if (!(result instanceof Promise)) return toValidation(result);
    return result.then(toValidation).catch(couldNotValidate);
  } catch (err) {
    return couldNotValidate(err);
  }
}

/**
 * The tool's `validateRequiredArgs`: the definition's own check first (its text is the more
 * specific), then `parameters`. A schema that validates asynchronously is left to `execute`,
 * which awaits its own validation (the promise left here never rejects: `validateStandard`).
 */
function composeValidator(
  own: AgentTool["validateRequiredArgs"],
  parameters: ToolParameters,
  inputSchema: JsonSchema,
): AgentTool["validateRequiredArgs"] {
  if (!isStandardSchema(parameters)) {
    if (!own) return undefined;
    return (args) => own(args) ?? validateRequiredArgs(args, inputSchema);
  }
  return (args) => {
    const problem = own?.(args);
    if (problem) return problem;
    const validation = validateStandard(parameters, args);
    return validation instanceof Promise || validation.ok ? undefined : validation.error;
  };
}

/** The arguments `execute` gets: a Standard Schema's validated value, else `args` as they are. */
async function argumentsFor(toolName: string, parameters: ToolParameters, args: ToolArgs) {
  if (!isStandardSchema(parameters)) return args;
  const validation = await validateStandard(parameters, args);
  if (!validation.ok) throw new Error(`${toolName}: ${validation.error}`);
  return validation.value;
}

/** A definition's `execute` with its argument type erased (it is checked at `defineTool`). */
type UntypedExecute = (
  args: unknown,
  context: ToolExecuteContext,
) => ToolReturn | Promise<ToolReturn>;

/** The `AgentTool` execute around the definition's: typed arguments in, `AgentToolResult` out. */
function wrapExecute(
  name: string,
  parameters: ToolParameters,
  execute: UntypedExecute,
): ToolExecuteFn {
  return async (toolCallId, args, signal, onPartialResult) => {
    const typed = await argumentsFor(name, parameters, args);
    return toAgentToolResult(name, await execute(typed, { toolCallId, signal, onPartialResult }));
  };
}

/** The JSON Schema the model sees, checked once: an object schema ajv compiles. */
function inputSchemaOf(name: string, parameters: ToolParameters): JsonSchema {
  const schema = isStandardSchema(parameters)
    ? jsonSchemaOfStandard(name, parameters)
    : (parameters as JsonSchema);
  if (typeof schema !== "object" || schema === null || schema.type !== "object") {
    throw new Error(`defineTool "${name}": parameters must describe an object (type "object")`);
  }
  const problem = describeInvalidSchema(schema);
  if (problem) throw new Error(`defineTool "${name}": ${problem}`);
  return schema;
}

/**
 * Builds an `AgentTool` from a definition whose `execute` gets typed arguments: typed from
 * a zod 4 schema (or any Standard Schema that implements Standard JSON Schema: valibot,
 * arktype, …) or from a literal / `as const` JSON Schema (`json-schema-to-ts`'s
 * `FromSchema`), so a misspelt or mistyped argument fails to compile.
 *
 * At definition time the JSON Schema the model sees is derived once (a Standard Schema's
 * input side as draft-07, `$schema` dropped) and checked: it must be an object schema that
 * ajv compiles; else this throws an `Error` naming the tool. The tool's name and queue are
 * checked as a tool file's would be.
 *
 * Validation: a Standard Schema validates the arguments itself (`~standard.validate`, so zod
 * refinements hold), once in `validateRequiredArgs` (a failure is an error result naming the
 * field, before `beforeToolCall` and approval) and again when the call runs, where its
 * validated, possibly transformed, value is what `execute` gets (a worker gets the arguments
 * as JSON, so `execute` cannot rely on the first pass). A JSON Schema validates with ajv as
 * on any `AgentTool`. A `validateRequiredArgs` in the definition runs first, then the schema.
 *
 * `execute` may return a string (one text content) or `{ content }` without `details`
 * (`details: {}`). `label` defaults to the name; every other `AgentTool` field
 * (`prepareArguments`, `queue`, `retries`, `approval`, `timeoutMs`, …) is kept as given.
 *
 * @example
 * import { z } from "zod";
 * export function getTool() {
 *   return defineTool({
 *     name: "getWeather",
 *     description: "Weather in a city",
 *     parameters: z.object({ city: z.string().min(1), days: z.number().int().max(7).default(1) }),
 *     execute: ({ city, days }) => `Sunny in ${city} for ${days} day(s)`,
 *   });
 * }
 * // or, with a JSON Schema: parameters: { type: "object", properties: { city: { type: "string" } },
 * //   required: ["city"] } as const, and `execute: ({ city }) => …` sees `city: string`.
 */
export function defineTool<const P extends ToolParameters>(
  definition: ToolDefinition<P>,
): AgentTool {
  const { parameters, execute, label, validateRequiredArgs: own, ...rest } = definition;
  const inputSchema = inputSchemaOf(definition.name, parameters);
  const tool: AgentTool = {
    ...rest,
    label: label ?? definition.name,
    inputSchema,
    execute: wrapExecute(definition.name, parameters, execute as UntypedExecute),
  };
  const validator = composeValidator(own, parameters, inputSchema);
  if (validator) tool.validateRequiredArgs = validator;
  const invalid = describeInvalidTool(tool);
  if (invalid) throw new Error(`defineTool "${definition.name}": ${invalid}`);
  return tool;
}
