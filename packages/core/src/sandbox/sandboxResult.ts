import type { AgentToolResult, MessageContent } from "../types/index.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One content item as the guest returned it, checked; or what is wrong with it. */
function toContent(item: unknown, index: number): MessageContent | string {
  if (!isRecord(item)) return `content[${index}] is not an object`;
  if (item.type === "text" && typeof item.text === "string") {
    return { type: "text", text: item.text };
  }
  if (item.type === "image" && typeof item.data === "string" && typeof item.mimeType === "string") {
    return { type: "image", data: item.data, mimeType: item.mimeType };
  }
  return `content[${index}] must be {type:"text", text} or {type:"image", data, mimeType}`;
}

function fromResultObject(value: Record<string, unknown>): AgentToolResult | string {
  if (!Array.isArray(value.content)) return "its content is not an array";
  if (value.details !== undefined && !isRecord(value.details)) {
    return "its details are not an object";
  }
  const content: MessageContent[] = [];
  for (const [index, item] of value.content.entries()) {
    const checked = toContent(item, index);
    if (typeof checked === "string") return checked;
    content.push(checked);
  }
  return { content, details: (value.details as Record<string, unknown> | undefined) ?? {} };
}

/**
 * Turns what written code returned (already parsed from JSON) into a tool result: a string
 * becomes one text item; an object with `content` must be `{content: [...], details?: {...}}`;
 * any other JSON value becomes a text item of its JSON. Returns an error text when an object
 * with `content` is malformed. Never throws.
 */
export function toSandboxToolResult(value: unknown): AgentToolResult | string {
  if (typeof value === "string") return { content: [{ type: "text", text: value }], details: {} };
  if (isRecord(value) && "content" in value) return fromResultObject(value);
  return { content: [{ type: "text", text: JSON.stringify(value) }], details: {} };
}

/** Adds the captured `console.log` lines as `details.logs`, unless the code set that key. */
export function withLogs(result: AgentToolResult, logs: string[]): AgentToolResult {
  if (logs.length === 0 || "logs" in result.details) return result;
  return { ...result, details: { ...result.details, logs } };
}
