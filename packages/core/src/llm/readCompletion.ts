import type { CompletionParts, RawToolCall } from "./completionParts.js";
import {
  isJsonObject,
  type JsonObject,
  readReasoning,
  readTextContent,
  stringOrUndefined,
} from "./jsonShape.js";

/** The outcome of reading a response: its parts, or why it is malformed. */
export type ReadResult = { ok: true; parts: CompletionParts } | { ok: false; error: string };

/**
 * Reads a plain (non-streamed) `chat.completion` response, checking its shape as it goes,
 * since OpenAI-compatible servers vary. Uses the first choice. Never throws.
 *
 * @example
 * readCompletion({ choices: [{ message: { content: "hi" }, finish_reason: "stop" }] })
 * // { ok: true, parts: { text: "hi", thinking: "", toolCalls: [], finishReason: "stop" } }
 */
export function readCompletion(response: unknown): ReadResult {
  if (!isJsonObject(response)) {
    return { ok: false, error: `Malformed response from the model server: ${preview(response)}` };
  }
  const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
  if (!isJsonObject(choice) || !isJsonObject(choice.message)) {
    return { ok: false, error: "Malformed response from the model server: no choices[0].message" };
  }
  const message = choice.message;
  const parts: CompletionParts = {
    text: readTextContent(message.content),
    thinking: readReasoning(message),
    toolCalls: readToolCalls(message.tool_calls),
    finishReason: stringOrUndefined(choice.finish_reason),
    usage: response.usage,
    model: stringOrUndefined(response.model),
  };
  return { ok: true, parts };
}

function readToolCalls(value: unknown): RawToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isJsonObject).map(readToolCall);
}

function readToolCall(call: JsonObject): RawToolCall {
  const fn = isJsonObject(call.function) ? call.function : {};
  const raw: RawToolCall = { name: stringOrUndefined(fn.name) ?? "" };
  const id = stringOrUndefined(call.id);
  if (id) raw.id = id;
  if (fn.arguments !== undefined && fn.arguments !== null) raw.arguments = fn.arguments;
  return raw;
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
