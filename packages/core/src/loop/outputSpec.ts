import { checkAgainstSchema } from "../tools/validateArguments.js";
import type {
  AgentContext,
  AgentLoopConfig,
  JsonSchema,
  LlmRequest,
  OutputMode,
  OutputValidator,
  ResponseFormat,
} from "../types/index.js";

/** The default number of corrections sent back after an invalid final answer. */
export const DEFAULT_OUTPUT_RETRIES = 2;

/** The `response_format` name used when neither `outputName` nor the schema's `title` gives one. */
const DEFAULT_OUTPUT_NAME = "output";

/** What OpenAI accepts as a `json_schema` name. */
const OUTPUT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A run's structured-output settings, resolved once from its config. */
export interface OutputSpec {
  schema: JsonSchema;
  mode: OutputMode;
  retries: number;
  format: ResponseFormat;
  validate?: OutputValidator;
}

function outputName(config: AgentLoopConfig, schema: JsonSchema): string {
  if (config.outputName !== undefined) {
    if (!OUTPUT_NAME.test(config.outputName))
      throw new TypeError(`outputName must be 1-64 letters, digits, '_' or '-'`);
    return config.outputName;
  }
  const title = schema.title;
  return typeof title === "string" && OUTPUT_NAME.test(title) ? title : DEFAULT_OUTPUT_NAME;
}

/**
 * The structured-output settings of `config`, or `undefined` when it has no `outputSchema`.
 * Throws a `TypeError` naming the option when one is malformed (a negative `outputRetries`,
 * an unknown `outputMode`, a bad `outputName`, a schema ajv cannot compile).
 *
 * @example resolveOutputSpec({ outputSchema: { type: "object" } })?.retries // 2
 */
export function resolveOutputSpec(config: AgentLoopConfig): OutputSpec | undefined {
  const schema = config.outputSchema;
  if (schema === undefined) return undefined;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw new TypeError("outputSchema must be a JSON Schema object");
  const mode = config.outputMode ?? "jsonSchema";
  if (mode !== "jsonSchema" && mode !== "instructions")
    throw new TypeError(`outputMode must be "jsonSchema" or "instructions", got ${String(mode)}`);
  const retries = config.outputRetries ?? DEFAULT_OUTPUT_RETRIES;
  if (!Number.isInteger(retries) || retries < 0)
    throw new TypeError(`outputRetries must be a whole number of at least 0, got ${retries}`);
  const compiled = config.validateOutput ? undefined : checkAgainstSchema(null, schema);
  if (compiled?.kind === "invalidSchema")
    throw new TypeError(`outputSchema is not a valid JSON Schema: ${compiled.error}`);
  const format: ResponseFormat = { name: outputName(config, schema), schema };
  if (config.outputStrict !== undefined) format.strict = config.outputStrict;
  return { schema, mode, retries, format, validate: config.validateOutput };
}

/** The system prompt's addition in `"instructions"` mode: the schema, and how to answer. */
export function outputInstructions(spec: OutputSpec): string {
  return [
    "When you give your final answer (a reply without tool calls), reply with only a JSON value",
    "that matches the JSON Schema below: no prose around it, no code fences.",
    JSON.stringify(spec.schema),
  ].join("\n");
}

/**
 * Formats a turn's request with the output format applied: in `"instructions"` mode the
 * schema joins the system prompt; in `"jsonSchema"` mode it goes as `responseFormat`.
 * With no spec, `format(context)` as is.
 */
export function formatWithOutput(
  spec: OutputSpec | undefined,
  context: AgentContext,
  format: (context: AgentContext) => LlmRequest,
): LlmRequest {
  if (!spec) return format(context);
  if (spec.mode === "instructions") {
    const systemPrompt = `${context.systemPrompt}\n\n${outputInstructions(spec)}`;
    return format({ ...context, systemPrompt });
  }
  return { ...format(context), responseFormat: spec.format };
}
