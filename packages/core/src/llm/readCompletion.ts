import type { ToolCallContent } from "../types/index.js";
import type { CompletionParts } from "./completionParts.js";
import {
  firstChoice,
  isJsonObject,
  type JsonObject,
  readContent,
  readReasoning,
  stringOrUndefined,
} from "./jsonShape.js";

/** The outcome of reading a response: its parts, or why it is malformed. */
export type ReadResult = { ok: true; parts: CompletionParts } | { ok: false; error: string };

/**
 * Reads a plain (non-streamed) `chat.completion` response, checking its shape as it goes,
 * since OpenAI-compatible servers vary. Uses the choice with `index` 0 (see `firstChoice`);
 * reasoning comes from `reasoning_content` / `reasoning` and from `thinking` content parts, a
 * refusal from `message.refusal`. Never throws.
 *
 * @example
 * readCompletion({ choices: [{ message: { content: "hi" }, finish_reason: "stop" }] })
 * // { ok: true, parts: { text: "hi", thinking: "", refusal: "", toolCalls: [], finishReason: "stop" } }
 */
export function readCompletion(response: unknown): ReadResult {
  if (!isJsonObject(response)) {
    return { ok: false, error: `Malformed response from the model server: ${preview(response)}` };
  }
  const choice = firstChoice(response.choices);
  if (!choice || !isJsonObject(choice.message)) {
    return { ok: false, error: "Malformed response from the model server: no choices[0].message" };
  }
  const message = choice.message;
  const content = readContent(message.content);
  const parts: CompletionParts = {
    text: content.text,
    thinking: readReasoning(message) + content.thinking,
    refusal: stringOrUndefined(message.refusal) ?? "",
    toolCalls: readToolCalls(message.tool_calls),
    finishReason: stringOrUndefined(choice.finish_reason),
    usage: response.usage,
    model: stringOrUndefined(response.model),
  };
  return { ok: true, parts };
}

function readToolCalls(value: unknown): ToolCallContent[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isJsonObject).map(readToolCall);
}

/**
 * A call in its received form (see `CompletionParts.toolCalls`); a lenient server's object
 * arguments become their JSON text.
 */
function readToolCall(call: JsonObject): ToolCallContent {
  const fn = isJsonObject(call.function) ? call.function : {};
  const received: ToolCallContent = {
    type: "toolCall",
    id: stringOrUndefined(call.id) ?? "",
    name: stringOrUndefined(fn.name) ?? "",
    arguments: {},
  };
  const text = argumentsText(fn.arguments);
  if (text !== undefined) received.rawArguments = text;
  return received;
}

/**
 * The call's arguments as text: a string as it is, an object as its JSON, and an object with
 * no JSON text (a cycle, or nesting too deep to write out) as a text that is not JSON, so the
 * call is refused rather than run without arguments.
 */
function argumentsText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return undefined;
  try {
    return JSON.stringify(value);
  } catch {
    return "(arguments that cannot be written as JSON)";
  }
}

/** A short, single-line view of an unexpected value for an error message. */
export function preview(value: unknown): string {
  const text = typeof value === "string" ? value : safeStringify(value);
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line || "(empty body)";
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
