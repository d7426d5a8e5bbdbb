import { APIConnectionError, APIError } from "openai";
import { describeError } from "../tools/toolResults.js";

/** Longest `errorMessage` kept; a server that returns a whole HTML page is cut here. */
const MAX_ERROR_LENGTH = 1000;

/**
 * A one-line, secret-free description of a failed model call, for `errorMessage`.
 *
 * HTTP errors read `"<status> <server's message>"` (e.g. `"400 model not found"`); connection
 * failures read `"Connection error: <cause>"`; an error event inside a stream reads
 * `"Error in the model server's stream: <message>"`; a body that is not JSON reads
 * `"Malformed response from the model server: ..."`. Every secret in `secrets` and any
 * `Bearer` token is replaced by `[redacted]`. Never throws.
 */
export function describeLlmError(err: unknown, secrets: readonly string[]): string {
  return redactSecrets(rawDescription(err), secrets).slice(0, MAX_ERROR_LENGTH);
}

function rawDescription(err: unknown): string {
  if (err instanceof APIConnectionError) {
    const cause = err.cause === undefined ? "" : causeChain(err.cause);
    return cause ? `Connection error: ${cause}` : "Connection error";
  }
  if (err instanceof APIError && typeof err.status === "number") {
    const text = err.message.trim();
    return text.startsWith(String(err.status)) ? text : `${err.status} ${text}`;
  }
  if (err instanceof APIError && err.status === undefined) {
    return `Error in the model server's stream: ${err.message.trim()}`;
  }
  if (err instanceof SyntaxError) {
    return `Malformed response from the model server: ${err.message}`;
  }
  return describeError(err);
}

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:1` from nested causes. */
function causeChain(cause: unknown): string {
  const texts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; current !== undefined && depth < 4; depth++) {
    texts.push(describeError(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return texts.join(": ");
}

/**
 * Replaces every occurrence of each secret (of 4 characters or more) and any
 * `Bearer <token>` with `[redacted]`.
 *
 * @example redactSecrets("bad key sk-123456", ["sk-123456"]) // "bad key [redacted]"
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 4) result = result.split(secret).join("[redacted]");
  }
  return result.replace(/Bearer\s+[^\s"',]+/gi, "Bearer [redacted]");
}

/**
 * The HTTP status a `describeLlmError` description starts with (`"401 Incorrect API key…"` →
 * 401), or `undefined` for a failure without one (a connection error, a malformed body, no
 * description). Reads only the leading three digits; never throws.
 *
 * @example readLlmErrorStatus("429 Rate limit reached") // 429
 */
export function readLlmErrorStatus(description: string | undefined): number | undefined {
  const match = /^([1-5]\d\d)\b/.exec(description ?? "");
  return match ? Number(match[1]) : undefined;
}
