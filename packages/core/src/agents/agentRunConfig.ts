import { describeBadBudget, lowerBudget } from "../features/budgets/protocol.js";
import { isStandardSchema, jsonSchemaOfStandard, toValidation } from "../tools/toolParameters.js";
import type {
  AgentLoopConfig,
  JsonSchema,
  OutputCheck,
  OutputValidator,
  RunBudget,
} from "../types/index.js";

/** The parts of an agent definition (`AgentDefinition`) its run settings come from. */
export interface AgentRunFields {
  name: string;
  maxTurns?: number;
  outputSchema?: unknown;
  outputRetries?: number;
  budget?: RunBudget;
}

/** The run settings an agent definition brings to its runs: turns, structured output, budget. */
export type AgentRunSettings = Pick<
  AgentLoopConfig,
  "maxTurns" | "outputSchema" | "outputRetries" | "validateOutput" | "budget"
>;

/** A Standard Schema's own validation as an `OutputValidator` (transforms and refinements hold). */
function standardOutputValidator(schema: Parameters<typeof isStandardSchema>[0]): OutputValidator {
  return async (value): Promise<OutputCheck> => {
    if (!isStandardSchema(schema)) return { ok: true, value };
    const checked = toValidation(await schema["~standard"].validate(value));
    return checked.ok ? checked : { ok: false, errors: [checked.error] };
  };
}

/** The JSON Schema the model is asked for, and the validator, of an agent's `outputSchema`. */
function outputSettings(definition: AgentRunFields): AgentRunSettings {
  const schema = definition.outputSchema;
  if (schema === undefined) return {};
  const retries =
    definition.outputRetries === undefined ? {} : { outputRetries: definition.outputRetries };
  if (!isStandardSchema(schema)) return { outputSchema: schema as JsonSchema, ...retries };
  return {
    outputSchema: jsonSchemaOfStandard(definition.name, schema),
    validateOutput: standardOutputValidator(schema),
    ...retries,
  };
}

/**
 * What the runs of `definition` use on top of the coordinator's `base` config: the agent's
 * `maxTurns`, its structured output (`outputSchema` as JSON Schema, or a Standard Schema such
 * as zod, which then validates the answer itself; `outputRetries`), and its `budget` lowered by
 * the coordinator's own (`YIEM_BUDGET`), never raised. Fields the agent does not set are left
 * out, so the coordinator's apply. Throws when a Standard Schema cannot be written as JSON Schema.
 *
 * @example const config = { ...base, ...agentRunSettings(support, base) };
 */
export function agentRunSettings(
  definition: AgentRunFields,
  base: AgentLoopConfig,
): AgentRunSettings {
  const cached = settingsCache.get(definition);
  if (cached?.base === base) return cached.settings;
  const settings: AgentRunSettings = outputSettings(definition);
  if (definition.maxTurns !== undefined) settings.maxTurns = definition.maxTurns;
  const budget = lowerBudget(base.budget, definition.budget);
  if (budget) settings.budget = budget;
  settingsCache.set(definition, { base, settings });
  return settings;
}

/** Each definition's settings, made once per coordinator config (a derived schema compiles once). */
const settingsCache = new WeakMap<
  AgentRunFields,
  { base: AgentLoopConfig; settings: AgentRunSettings }
>();

/**
 * Why an agent's `outputSchema` or `budget` is unusable, or `undefined`: a schema that is not
 * an object, a Standard Schema that cannot be written as JSON Schema, a budget limit that is
 * not a number of zero or more.
 */
export function describeBadRunSettings(definition: AgentRunFields): string | undefined {
  const { outputSchema, budget } = definition;
  if (outputSchema !== undefined && (typeof outputSchema !== "object" || outputSchema === null))
    return "outputSchema: must be a JSON Schema object or a Standard Schema (zod)";
  try {
    outputSettings(definition);
  } catch (err) {
    return `outputSchema: ${(err as Error).message}`;
  }
  const bad = describeBadBudget(budget);
  return bad ? `budget${bad.at}: ${bad.problem}` : undefined;
}
