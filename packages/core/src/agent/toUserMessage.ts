import type { MessageContent, OpenAIUserPart, UserInput, UserMessage } from "../types/index.js";

/** Thrown when an input cannot be read as a user message; says what was wrong. */
export class InvalidUserInputError extends Error {
  override name = "InvalidUserInputError";
}

function dataUrlToImage(url: string): MessageContent {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match) throw new InvalidUserInputError("image_url must be a base64 data: URL");
  return { type: "image", mimeType: match[1] as string, data: match[2] as string };
}

function toContent(part: OpenAIUserPart): MessageContent {
  if (part.type === "text") return { type: "text", text: part.text };
  if (part.type === "image") return part;
  if (part.type === "image_url") return dataUrlToImage(part.image_url.url);
  throw new InvalidUserInputError(
    `unsupported content part type: ${String((part as { type: unknown }).type)}`,
  );
}

/**
 * Reads a plain string, a `UserMessage` or an OpenAI-style `{role: "user", content}` as a
 * `UserMessage` (the seed's `OpenAiToUserMessage`).
 * Throws `InvalidUserInputError` for anything else, before any state changes.
 *
 * @example toUserMessage("hi") // { role: "user", content: [{ type: "text", text: "hi" }], timestamp }
 */
export function toUserMessage(input: UserInput): UserMessage {
  if (typeof input === "string") {
    return { role: "user", content: [{ type: "text", text: input }], timestamp: Date.now() };
  }
  if (typeof input !== "object" || input === null || input.role !== "user") {
    throw new InvalidUserInputError('a message must be a string or have role "user"');
  }
  const timestamp =
    "timestamp" in input && typeof input.timestamp === "number" ? input.timestamp : Date.now();
  if (typeof input.content === "string") {
    return { role: "user", content: [{ type: "text", text: input.content }], timestamp };
  }
  if (!Array.isArray(input.content)) {
    throw new InvalidUserInputError("message content must be a string or an array of parts");
  }
  return { role: "user", content: input.content.map(toContent), timestamp };
}
