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

/**
 * Text of a message's `content`, which servers send as a string, `null`, or (rarely) an array
 * of `{type: "text", text}` parts. Anything else reads as "".
 */
export function readTextContent(value: unknown): string {
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
