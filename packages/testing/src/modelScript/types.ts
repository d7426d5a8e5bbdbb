/**
 * A model script: what the scripted model answers for which input, as a JSON file gives it
 * (the format is documented in packages/testing/README.md). Parsed and checked by
 * `parseModelScript`; run by `createScriptResponder`.
 */
export interface ModelScript {
  /** The model name in responses and in `GET /v1/models`. Default `scripted-model`. */
  model?: string;
  /** Tried in order against the last user message; the first that matches answers. */
  rules: ScriptRule[];
  /** Answers when no rule matches. Without it such a request gets an HTTP 400. */
  default?: ScriptSteps;
}

/** The turns the model takes after a user message: step N answers the N-th model call since it. */
export interface ScriptSteps {
  steps: ScriptStep[];
}

/** A rule: when the last user message matches `match`, the model takes `steps`. */
export interface ScriptRule extends ScriptSteps {
  /** Shown in the command's request log and in errors. Default `rules[N]`. */
  name?: string;
  match: RuleMatch;
}

/**
 * How a rule matches the last user message: `contains` a substring (case-insensitive), or a
 * `regex` (JavaScript syntax, with optional `flags` such as `"i"`) whose groups placeholders
 * can quote as `{{match.1}}` or `{{match.NAME}}`.
 */
export type RuleMatch = { contains: string } | { regex: string; flags?: string };

/** One model turn: tool calls (with optional text beside them), or a final text answer. */
export type ScriptStep = ToolCallsStep | TextStep;

/** A turn that calls tools, in parallel when there are several. */
export interface ToolCallsStep {
  toolCalls: ScriptToolCall[];
  /** Text sent beside the calls (placeholders filled). */
  text?: string;
}

/** A turn that answers with text (placeholders filled); it ends the run. */
export interface TextStep {
  text: string;
}

/** One tool call of a step; placeholders in its string argument values are filled. */
export interface ScriptToolCall {
  name: string;
  /** The arguments object. Default `{}`. */
  arguments?: Record<string, unknown>;
}
