import type { ScriptedReply, ScriptedRequest } from "../scriptedModel/types.js";
import { type Conversation, readConversation } from "./conversation.js";
import { fillPlaceholders, type PlaceholderValues } from "./placeholders.js";
import type { ModelScript, RuleMatch, ScriptRule, ScriptStep, ScriptSteps } from "./types.js";

/** How a script answered one request: which rule, which step, what reply. */
export interface ScriptDecision {
  /** The request's index on its server. */
  requestIndex: number;
  /** The rule: its name in quotes, `rules[N]` without one, `default`, or `none` when nothing matched. */
  rule: string;
  /** The step taken, from 1 (0 when no step was). */
  step: number;
  /** How many steps the rule has. */
  stepCount: number;
  reply: ScriptedReply;
}

/** A rule with its match compiled. */
interface CompiledRule extends ScriptSteps {
  label: string;
  matches(input: string): Record<string, string> | undefined;
}

/**
 * Makes a `respond` function for `startScriptedModelServer` that answers from `script` (a
 * checked one, see `parseModelScript`). Each request is answered on its own, from its
 * messages: the first rule matching the last user message (else the default) gives the steps,
 * and the number of assistant turns since that message picks the step, so one server answers
 * any number of conversations at once. Placeholders are filled from the conversation. With no
 * match and no default, or past a rule's last step, the reply is an HTTP 400 saying so.
 * `onDecision` hears every answer (the command logs them).
 */
export function createScriptResponder(
  script: ModelScript,
  onDecision?: (decision: ScriptDecision) => void,
): (request: ScriptedRequest) => ScriptedReply {
  const rules = script.rules.map(compileRule);
  const fallback = script.default;
  return (request) => {
    const decision = decide(request, readConversation(request.body.messages), rules, fallback);
    onDecision?.(decision);
    return decision.reply;
  };
}

function decide(
  request: ScriptedRequest,
  conversation: Conversation,
  rules: CompiledRule[],
  fallback: ScriptSteps | undefined,
): ScriptDecision {
  const requestIndex = request.index;
  const chosen = chooseRule(conversation.input, rules, fallback);
  if (!chosen) {
    const message = `scripted model: no rule matches the last user message ${JSON.stringify(conversation.input)} and the script has no default`;
    return { requestIndex, rule: "none", step: 0, stepCount: 0, reply: badRequest(message) };
  }
  const { label, steps, match } = chosen;
  const step = steps[conversation.turnsSinceInput];
  const decision = { requestIndex, rule: label, stepCount: steps.length };
  if (!step) {
    const message = `scripted model: rule ${label} has ${steps.length} step(s), and this is model call ${conversation.turnsSinceInput + 1} since the last user message`;
    return { ...decision, step: 0, reply: badRequest(message) };
  }
  const values = { input: conversation.input, match, results: conversation.results };
  return { ...decision, step: conversation.turnsSinceInput + 1, reply: replyFor(step, values) };
}

function chooseRule(
  input: string,
  rules: CompiledRule[],
  fallback: ScriptSteps | undefined,
): { label: string; steps: ScriptStep[]; match: Record<string, string> } | undefined {
  for (const rule of rules) {
    const match = rule.matches(input);
    if (match) return { label: rule.label, steps: rule.steps, match };
  }
  return fallback ? { label: "default", steps: fallback.steps, match: {} } : undefined;
}

function compileRule(rule: ScriptRule, index: number): CompiledRule {
  return {
    label: rule.name === undefined ? `rules[${index}]` : JSON.stringify(rule.name),
    steps: rule.steps,
    matches: compileMatch(rule.match),
  };
}

/** A function giving the match's placeholder values, or `undefined` when `input` does not match. */
function compileMatch(match: RuleMatch): (input: string) => Record<string, string> | undefined {
  if ("contains" in match) {
    const needle = match.contains.toLowerCase();
    return (input) => {
      const at = input.toLowerCase().indexOf(needle);
      return at < 0 ? undefined : { "0": input.slice(at, at + needle.length) };
    };
  }
  const regex = new RegExp(match.regex, match.flags);
  return (input) => {
    const found = regex.exec(input);
    if (!found) return undefined;
    const values: Record<string, string> = {};
    found.forEach((group, n) => {
      values[String(n)] = group ?? "";
    });
    for (const [name, group] of Object.entries(found.groups ?? {})) values[name] = group ?? "";
    return values;
  };
}

function replyFor(step: ScriptStep, values: PlaceholderValues): ScriptedReply {
  if (!("toolCalls" in step)) return { kind: "text", text: fillPlaceholders(step.text, values) };
  const calls = step.toolCalls.map((call) => ({
    name: call.name,
    arguments: fillArguments(call.arguments ?? {}, values) as Record<string, unknown>,
  }));
  const reply: ScriptedReply = { kind: "toolCalls", calls };
  if (step.text !== undefined) reply.text = fillPlaceholders(step.text, values);
  return reply;
}

/** A copy of `value` with the placeholders of every string inside it filled. */
function fillArguments(value: unknown, values: PlaceholderValues): unknown {
  if (typeof value === "string") return fillPlaceholders(value, values);
  if (Array.isArray(value)) return value.map((item) => fillArguments(item, values));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, fillArguments(item, values)]),
  );
}

function badRequest(message: string): ScriptedReply {
  return { kind: "httpError", status: 400, message };
}
