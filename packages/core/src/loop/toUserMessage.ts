import { YiemError } from "../errors/yiemError.js";
import { SETTINGS } from "../settings/catalogue.js";
import { DEFAULT_MAX_JSON_DEPTH, valueNestsDeeperThan } from "../tools/jsonDepth.js";
import type { MessageContent, UserInput, UserMessage } from "../types/index.js";

/** Thrown when an input cannot be read as a user message; `field` names what was wrong. Terminal. */
export class InvalidUserInputError extends YiemError {
  override name = "InvalidUserInputError";
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** Options of `toUserMessage`. */
export interface UserInputLimits {
  /** Largest accepted input, in bytes of its JSON text. Default 1 MiB. */
  maxInputBytes?: number;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readString(value: unknown, field: string): string {
  if (typeof value !== "string") throw new InvalidUserInputError(field, "must be a string");
  return value;
}

function readImage(data: unknown, mimeType: unknown, field: string): MessageContent {
  const base64 = readString(data, `${field}.data`);
  if (base64 === "" || !BASE64.test(base64))
    throw new InvalidUserInputError(`${field}.data`, "must be non-empty base64");
  const mime = readString(mimeType, `${field}.mimeType`);
  if (!/^image\/[A-Za-z0-9.+-]+$/.test(mime))
    throw new InvalidUserInputError(`${field}.mimeType`, 'must be an image type like "image/png"');
  return { type: "image", data: base64, mimeType: mime };
}

function readImageUrl(part: Record<string, unknown>, field: string): MessageContent {
  const image = part.image_url;
  const url = readString(isRecord(image) ? image.url : undefined, `${field}.image_url.url`);
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match)
    throw new InvalidUserInputError(`${field}.image_url.url`, "must be a base64 data: URL");
  return readImage(match[2], match[1], field);
}

/** Reads one content part, re-encoded with only the fields Yiem knows. */
function readPart(part: unknown, field: string): MessageContent {
  if (!isRecord(part)) throw new InvalidUserInputError(field, "must be an object");
  if (part.type === "text") return { type: "text", text: readString(part.text, `${field}.text`) };
  if (part.type === "image") return readImage(part.data, part.mimeType, field);
  if (part.type === "image_url") return readImageUrl(part, field);
  throw new InvalidUserInputError(
    `${field}.type`,
    `must be "text", "image" or "image_url", got ${JSON.stringify(part.type) ?? "nothing"}`,
  );
}

function readContent(content: unknown, field: string): MessageContent[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content))
    throw new InvalidUserInputError(field, "must be a string or an array of parts");
  if (content.length === 0) throw new InvalidUserInputError(field, "must not be empty");
  return content.map((part, i) => readPart(part, `${field}[${i}]`));
}

/** Refuses an input over `maxBytes` of JSON, or nested too deeply to measure it safely. */
function checkSize(input: unknown, field: string, maxBytes: number): void {
  if (valueNestsDeeperThan(input, DEFAULT_MAX_JSON_DEPTH)) {
    throw new InvalidUserInputError(
      field,
      `nests objects and arrays more than ${DEFAULT_MAX_JSON_DEPTH} levels deep`,
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? "", "utf8");
  if (bytes > maxBytes)
    throw new InvalidUserInputError(field, `is ${bytes} bytes, over the ${maxBytes}-byte cap`);
}

/**
 * Reads a plain string, a `UserMessage` or an OpenAI-style `{role: "user", content}` as a
 * `UserMessage` (the YiemAgent lifecycle's `OpenAiToUserMessage`), validated part by part and re-encoded with
 * only the fields Yiem knows. Every path that takes user input (the agent, the client, a
 * coordinator-queue job) reads it here, so they refuse the same inputs.
 * Throws `InvalidUserInputError` naming the field (e.g. `input.content[1].text`), before any
 * state changes (an input over `maxInputBytes`, or nesting more than 64 levels, included); `field` is the name the caller gives the input (default `input`).
 *
 * @example toUserMessage("hi") // { role: "user", content: [{ type: "text", text: "hi" }], timestamp }
 */
export function toUserMessage(
  input: UserInput | unknown,
  limits: UserInputLimits = {},
  field = "input",
): UserMessage {
  checkSize(input, field, limits.maxInputBytes ?? SETTINGS.maxInputBytes.default);
  if (typeof input === "string") {
    return { role: "user", content: [{ type: "text", text: input }], timestamp: Date.now() };
  }
  if (!isRecord(input))
    throw new InvalidUserInputError(field, "must be a string or a user message");
  if (input.role !== "user") throw new InvalidUserInputError(`${field}.role`, 'must be "user"');
  const timestamp =
    typeof input.timestamp === "number" && Number.isFinite(input.timestamp)
      ? input.timestamp
      : Date.now();
  return { role: "user", content: readContent(input.content, `${field}.content`), timestamp };
}
