/** A JSON object read from the wire, before its fields are checked. */
export type JsonObject = Record<string, unknown>;

/** True for a non-null, non-array object. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value when it is a string, else `undefined`. */
export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The value when it is a finite number, else `undefined`. */
export function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** What a message's or delta's `content` carried: answer text and reasoning. */
export interface ContentRead {
  text: string;
  thinking: string;
}

/**
 * Reads a message's or delta's `content`, which servers send as a string, `null`, or an array
 * of parts: `{type: "text", text}` parts are answer text; `{type: "thinking", thinking}` parts
 * (Mistral's magistral models) are reasoning, their `thinking` a string or an array of
 * `{type: "text", text}` parts. Other parts and shapes read as "".
 *
 * @example
 * readContent([{ type: "thinking", thinking: [{ type: "text", text: "hm" }] }, { type: "text", text: "42" }])
 * // { text: "42", thinking: "hm" }
 */
export function readContent(value: unknown): ContentRead {
  if (typeof value === "string") return { text: value, thinking: "" };
  const read: ContentRead = { text: "", thinking: "" };
  if (!Array.isArray(value)) return read;
  for (const part of value) {
    if (!isJsonObject(part)) continue;
    if (part.type === "thinking") read.thinking += readPartsText(part.thinking);
    else read.text += stringOrUndefined(part.text) ?? "";
  }
  return read;
}

/** A string, or the joined `text` of an array of parts; anything else reads as "". */
function readPartsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return "";
  return value
    .map((part) => (isJsonObject(part) ? (stringOrUndefined(part.text) ?? "") : ""))
    .join("");
}

/**
 * Reasoning text of a message or delta: the non-standard `reasoning_content` field that
 * DeepSeek, vLLM, llama.cpp and others send, or `reasoning` as a fallback.
 */
export function readReasoning(message: JsonObject): string {
  return stringOrUndefined(message.reasoning_content) ?? stringOrUndefined(message.reasoning) ?? "";
}

/**
 * The choice with `index` 0 of a response's or chunk's `choices`; the first one when no
 * choice carries a numeric `index` (a lenient server). A chunk of another choice (a request
 * with `n` > 1) gives `undefined`.
 */
export function firstChoice(choices: unknown): JsonObject | undefined {
  if (!Array.isArray(choices)) return undefined;
  const objects = choices.filter(isJsonObject);
  const indexed = objects.filter((choice) => typeof choice.index === "number");
  if (indexed.length === 0) return objects[0];
  return indexed.find((choice) => choice.index === 0);
}
