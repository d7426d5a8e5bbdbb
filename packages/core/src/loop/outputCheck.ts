import { checkAgainstSchema } from "../tools/validateArguments.js";
import type {
  AgentLoopConfig,
  AssistantMessage,
  OutputCheck,
  StopReason,
  UserMessage,
} from "../types/index.js";
import { type OutputSpec, resolveOutputSpec } from "./outputSpec.js";

/** Answers that end a run as they are, whatever the output schema: nothing to correct. */
export const UNCHECKED_STOP_REASONS: ReadonlySet<StopReason> = new Set([
  "error",
  "aborted",
  "refusal",
]);

/** An answer wrapped in one Markdown code fence (```json ... ```), as models in instructions mode often send. */
const FENCED = /^```[A-Za-z]*\s*\n([\s\S]*?)\n?```$/;

/** The answer's text (its text blocks, joined), without a single surrounding code fence. */
function answerText(answer: AssistantMessage): string {
  const text = answer.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("")
    .trim();
  return FENCED.exec(text)?.[1]?.trim() ?? text;
}

function parseAnswer(answer: AssistantMessage): { ok: true; value: unknown } | OutputCheck {
  const text = answerText(answer);
  if (text === "") return { ok: false, errors: ["the answer is empty; expected a JSON value"] };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, errors: [`the answer is not JSON (${(err as Error).message})`] };
  }
}

async function runValidator(spec: OutputSpec, value: unknown): Promise<OutputCheck> {
  if (!spec.validate) {
    const check = checkAgainstSchema(value, spec.schema, "output");
    if (check.kind === "valid") return { ok: true, value };
    if (check.kind === "invalid") return { ok: false, errors: check.errors };
    throw new Error(`the output schema is invalid: ${check.error}`);
  }
  try {
    return await spec.validate(value);
  } catch (err) {
    throw new Error(`the output validator failed: ${(err as Error).message}`);
  }
}

/**
 * Parses a final answer's text as JSON and checks it against the spec (ajv on the schema, or
 * `validateOutput`): `{ ok: true, value }` is the run's output; `{ ok: false, errors }` lists
 * what is wrong (not JSON, or each failing field). Throws when the schema itself does not
 * compile or the validator throws: no correction can fix that.
 *
 * @example await checkFinalAnswer(spec, answer) // { ok: false, errors: ['"city" is required'] }
 */
export async function checkFinalAnswer(
  spec: OutputSpec,
  answer: AssistantMessage,
): Promise<OutputCheck> {
  const parsed = parseAnswer(answer);
  if (!parsed.ok) return parsed;
  return runValidator(spec, parsed.value);
}

/** The user message that sends an invalid final answer's errors back to the model. */
export function buildOutputCorrection(errors: string[]): UserMessage {
  const text = [
    "Your final answer does not match the required output format:",
    ...errors.map((error) => `- ${error}`),
    "Answer again with only a JSON value that matches the JSON Schema.",
  ].join("\n");
  return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

/**
 * The run's final response when its answer still failed after every correction: the answer
 * itself, with `stopReason: "error"` and the errors in `errorMessage`.
 */
export function buildOutputFailure(
  answer: AssistantMessage,
  errors: string[],
  retries: number,
): AssistantMessage {
  const tries = retries === 1 ? "1 correction" : `${retries} corrections`;
  // 0 corrections is also a resumed run's stored answer, which gets none.
  const errorMessage = `The final answer did not match the output schema after ${tries}: ${errors.join("; ")}`;
  return { ...answer, stopReason: "error", errorMessage };
}

/**
 * The response for a final answer found already in the transcript (a resumed run whose
 * holder stopped right after storing it): with no `outputSchema`, the answer as is; else
 * checked once, with its `output` when valid, failed when not (a correction would need the
 * loop; the run is not reopened for it). Never throws.
 */
export async function settleStoredAnswer(
  config: AgentLoopConfig,
  answer: AssistantMessage,
): Promise<AssistantMessage> {
  try {
    const spec = resolveOutputSpec(config);
    if (!spec || UNCHECKED_STOP_REASONS.has(answer.stopReason)) return answer;
    const check = await checkFinalAnswer(spec, answer);
    if (check.ok) return { ...answer, output: check.value };
    return buildOutputFailure(answer, check.errors, 0);
  } catch (err) {
    return { ...answer, stopReason: "error", errorMessage: (err as Error).message };
  }
}
