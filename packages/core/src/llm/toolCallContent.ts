import { randomUUID } from "node:crypto";
import { parseToolArguments } from "../tools/parseToolArguments.js";
import type { ToolCallContent } from "../types/index.js";
import type { RawToolCall } from "./completionParts.js";

/** A fresh tool call id for a server that sent none: `call_` + random hex. */
export function generateToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

/**
 * Maps a received tool call to a `ToolCallContent` block. Never throws.
 *
 * `arguments` is the parsed object, or `{}` when parsing fails (`parseToolArguments` refuses
 * malformed, non-object, oversized and hostile payloads). `rawArguments` keeps the exact
 * string the model sent; an object from a lenient server is kept as its JSON text, so
 * `extractToolCalls` sees (and can refuse) the payload either way. A missing id is generated.
 *
 * @example
 * toToolCallContent({ id: "c1", name: "f", arguments: "{oops" })
 * // { type: "toolCall", id: "c1", name: "f", arguments: {}, rawArguments: "{oops" }
 */
export function toToolCallContent(call: RawToolCall): ToolCallContent {
  const parsed = parseToolArguments(call.arguments);
  const block: ToolCallContent = {
    type: "toolCall",
    id: call.id || generateToolCallId(),
    name: call.name,
    arguments: parsed.ok ? parsed.args : {},
  };
  const raw = rawText(call.arguments);
  if (raw !== undefined) block.rawArguments = raw;
  return block;
}

function rawText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return undefined;
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
