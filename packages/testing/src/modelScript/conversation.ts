import type { ToolResult } from "./placeholders.js";

/** What a script needs to know of a Chat Completions request's messages. */
export interface Conversation {
  /** The text of the last user message (empty when there is none). */
  input: string;
  /** How many assistant turns followed the last user message: the step to take is this one. */
  turnsSinceInput: number;
  /** The tool results since the last user message, in order, named by the call they answer. */
  results: ToolResult[];
}

/** A message as it travels in OpenAI's wire format (only the fields read here). */
interface WireMessage {
  role?: unknown;
  content?: unknown;
  tool_call_id?: unknown;
  tool_calls?: Array<{ id?: unknown; function?: { name?: unknown } }>;
}

/** Reads the last user message, the turns since it and their tool results from `messages`. */
export function readConversation(messages: readonly unknown[] | undefined): Conversation {
  const wire = (messages ?? []).filter(isMessage);
  const lastUser = wire.findLastIndex((message) => message.role === "user");
  const since = wire.slice(lastUser + 1);
  const toolNames = toolNamesById(since);
  return {
    input: lastUser < 0 ? "" : textOf(wire[lastUser]?.content),
    turnsSinceInput: since.filter((message) => message.role === "assistant").length,
    results: since
      .filter((message) => message.role === "tool")
      .map((message) => ({
        name: toolNames.get(String(message.tool_call_id)) ?? "",
        text: textOf(message.content),
      })),
  };
}

function isMessage(value: unknown): value is WireMessage {
  return typeof value === "object" && value !== null;
}

/** Tool call id → tool name, over the assistant turns of `messages`. */
function toolNamesById(messages: WireMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
      if (typeof call?.function?.name === "string") names.set(String(call.id), call.function.name);
    }
  }
  return names;
}

/** The text of a message's `content`: a string, or the text parts of an array. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .flatMap((part: { type?: unknown; text?: unknown }) =>
      part?.type === "text" && typeof part.text === "string" ? [part.text] : [],
    )
    .join("");
}
