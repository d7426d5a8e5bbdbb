import { ModelScriptError } from "./modelScriptError.js";
import { findPlaceholders, KNOWN_PLACEHOLDERS, type Placeholder } from "./placeholders.js";
import type {
  ModelScript,
  RuleMatch,
  ScriptRule,
  ScriptStep,
  ScriptSteps,
  ScriptToolCall,
} from "./types.js";

type JsonObject = Record<string, unknown>;

/** The `{{match.KEY}}` keys a rule's steps may quote (none for the default). */
type MatchKeys = ReadonlySet<string>;

const REGEX_FLAGS = /^[dimsuv]*$/;

/**
 * Checks that `value` (a parsed JSON document) is a model script and returns it typed.
 * Throws a {@link ModelScriptError} naming the first field that is wrong: a missing or
 * mistyped field, an unknown one (a typo), an invalid regex, a placeholder that does not
 * exist (or quotes a regex group the rule does not have), or a text step that is not last.
 */
export function parseModelScript(value: unknown): ModelScript {
  const script = expectObject(value, "", ["model", "description", "rules", "default"]);
  const rules = script.rules === undefined ? [] : expectArray(script.rules, "rules");
  if (rules.length === 0 && script.default === undefined) {
    throw new ModelScriptError("rules", "the script has no rules and no default: nothing answers");
  }
  const parsed: ModelScript = {
    rules: rules.map((rule, index) => parseRule(rule, `rules[${index}]`)),
  };
  if (script.model !== undefined) parsed.model = expectText(script.model, "model");
  if (script.default !== undefined) {
    const fallback = expectObject(script.default, "default", ["steps"]);
    parsed.default = parseSteps(fallback, "default", new Set());
  }
  return parsed;
}

function parseRule(value: unknown, field: string): ScriptRule {
  const rule = expectObject(value, field, ["name", "match", "steps"]);
  if (rule.match === undefined) throw new ModelScriptError(`${field}.match`, "is missing");
  const match = parseMatch(rule.match, `${field}.match`);
  const parsed: ScriptRule = { match, ...parseSteps(rule, field, matchKeysOf(match)) };
  if (rule.name !== undefined) parsed.name = expectText(rule.name, `${field}.name`);
  return parsed;
}

function parseMatch(value: unknown, field: string): RuleMatch {
  const match = expectObject(value, field, ["contains", "regex", "flags"]);
  if (match.contains !== undefined) {
    if (match.regex !== undefined || match.flags !== undefined) {
      throw new ModelScriptError(field, "has both contains and regex: give one");
    }
    return { contains: expectText(match.contains, `${field}.contains`) };
  }
  if (match.regex === undefined) throw new ModelScriptError(field, "needs contains or regex");
  const regex = expectText(match.regex, `${field}.regex`);
  const parsed: RuleMatch = { regex };
  if (match.flags !== undefined) {
    parsed.flags = expectString(match.flags, `${field}.flags`);
    if (!REGEX_FLAGS.test(parsed.flags)) {
      throw new ModelScriptError(
        `${field}.flags`,
        "only the flags d, i, m, s, u and v are allowed",
      );
    }
  }
  try {
    new RegExp(regex, parsed.flags);
  } catch (err) {
    throw new ModelScriptError(`${field}.regex`, (err as Error).message);
  }
  return parsed;
}

/** `0` (the matched text), and the regex's numbered and named groups. */
function matchKeysOf(match: RuleMatch): MatchKeys {
  if ("contains" in match) return new Set(["0"]);
  // An alternative that matches the empty string shows every group, none of them set.
  const groups = new RegExp(`(?:${match.regex})|`, match.flags).exec("");
  const numbered = Array.from({ length: groups?.length ?? 1 }, (_, n) => String(n));
  return new Set([...numbered, ...Object.keys(groups?.groups ?? {})]);
}

function parseSteps(owner: JsonObject, field: string, matchKeys: MatchKeys): ScriptSteps {
  if (owner.steps === undefined) throw new ModelScriptError(`${field}.steps`, "is missing");
  const steps = expectArray(owner.steps, `${field}.steps`);
  if (steps.length === 0) throw new ModelScriptError(`${field}.steps`, "needs at least one step");
  return {
    steps: steps.map((step, index) => {
      const stepField = `${field}.steps[${index}]`;
      const parsed = parseStep(step, stepField, matchKeys);
      if (!("toolCalls" in parsed) && index < steps.length - 1) {
        throw new ModelScriptError(stepField, "a text step ends the run, so it must be the last");
      }
      return parsed;
    }),
  };
}

function parseStep(value: unknown, field: string, matchKeys: MatchKeys): ScriptStep {
  const step = expectObject(value, field, ["toolCalls", "text"]);
  const text =
    step.text === undefined ? undefined : expectString(step.text, `${field}.text`, matchKeys);
  if (step.toolCalls === undefined) {
    if (text === undefined) throw new ModelScriptError(field, "needs toolCalls or text");
    return { text };
  }
  const calls = expectArray(step.toolCalls, `${field}.toolCalls`);
  if (calls.length === 0) {
    throw new ModelScriptError(`${field}.toolCalls`, "needs at least one call");
  }
  const toolCalls = calls.map((call, index) =>
    parseToolCall(call, `${field}.toolCalls[${index}]`, matchKeys),
  );
  return text === undefined ? { toolCalls } : { toolCalls, text };
}

function parseToolCall(value: unknown, field: string, matchKeys: MatchKeys): ScriptToolCall {
  const call = expectObject(value, field, ["name", "arguments"]);
  if (call.name === undefined) throw new ModelScriptError(`${field}.name`, "is missing");
  const parsed: ScriptToolCall = { name: expectText(call.name, `${field}.name`) };
  if (call.arguments === undefined) return parsed;
  const args = expectObject(call.arguments, `${field}.arguments`);
  checkArgumentPlaceholders(args, `${field}.arguments`, matchKeys);
  parsed.arguments = args;
  return parsed;
}

/** Checks the placeholders of every string inside `value` (objects and arrays walked). */
function checkArgumentPlaceholders(value: unknown, field: string, matchKeys: MatchKeys): void {
  for (const [text, where] of stringsIn(value, field)) checkPlaceholders(text, where, matchKeys);
}

/** Every string inside `value`, with its field path. */
function* stringsIn(value: unknown, field: string): Generator<[string, string]> {
  if (typeof value === "string") yield [value, field];
  if (typeof value !== "object" || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    yield* stringsIn(item, Array.isArray(value) ? `${field}[${key}]` : `${field}.${key}`);
  }
}

function checkPlaceholders(text: string, field: string, matchKeys: MatchKeys): void {
  for (const { written, placeholder } of findPlaceholders(text)) {
    if (!placeholder) {
      throw new ModelScriptError(
        field,
        `unknown placeholder ${written} (known: ${KNOWN_PLACEHOLDERS})`,
      );
    }
    if (!quotesMissingGroup(placeholder, matchKeys)) continue;
    throw new ModelScriptError(
      field,
      matchKeys.size === 0
        ? `${written}: the default has no match to quote`
        : `${written}: the rule's match has no such group (it has ${[...matchKeys].join(", ")})`,
    );
  }
}

function quotesMissingGroup(placeholder: Placeholder, matchKeys: MatchKeys): boolean {
  return placeholder.kind === "match" && !matchKeys.has(placeholder.key);
}

/** `value` as an object whose keys are all in `known` (when given). */
function expectObject(value: unknown, field: string, known?: string[]): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ModelScriptError(field, `must be an object, not ${describe(value)}`);
  }
  const unknown = known ? Object.keys(value).find((key) => !known.includes(key)) : undefined;
  if (unknown !== undefined) {
    const where = field ? `${field}.${unknown}` : unknown;
    throw new ModelScriptError(where, `unknown field (expected ${known?.join(", ")})`);
  }
  return value as JsonObject;
}

function expectArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) {
    throw new ModelScriptError(field, `must be an array, not ${describe(value)}`);
  }
  return value;
}

/** `value` as a string, its placeholders checked when `matchKeys` is given. */
function expectString(value: unknown, field: string, matchKeys?: MatchKeys): string {
  if (typeof value !== "string") {
    throw new ModelScriptError(field, `must be a string, not ${describe(value)}`);
  }
  if (matchKeys) checkPlaceholders(value, field, matchKeys);
  return value;
}

/** `value` as a non-empty string. */
function expectText(value: unknown, field: string): string {
  const text = expectString(value, field);
  if (text.length === 0) throw new ModelScriptError(field, "must not be empty");
  return text;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}
