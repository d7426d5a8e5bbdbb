import type { AgentContext, AgentMessage } from "../types/index.js";

/** The default cap on the transcript sent to the model in one request (4 MiB of JSON). */
export const DEFAULT_MAX_CONTEXT_BYTES = 4 * 1024 * 1024;

/** How a context fits its cap: as it is, with its oldest turns dropped, or not at all. */
export type TrimmedContext =
  | { kind: "fits"; context: AgentContext; droppedMessages: number }
  | { kind: "tooLarge"; error: string };

const sizes = new WeakMap<AgentMessage, number>();

/** Bytes of a message's JSON, measured once per message object. */
function sizeOf(message: AgentMessage): number {
  const known = sizes.get(message);
  if (known !== undefined) return known;
  const size = Buffer.byteLength(JSON.stringify(message), "utf8");
  sizes.set(message, size);
  return size;
}

/**
 * Keeps the transcript sent to the model under `maxBytes` (bytes of the messages' JSON): when
 * it is over, drops the oldest turns, cutting only before a user message so every tool call
 * keeps its result; the system prompt always stays. When even the newest turn is over the cap,
 * there is nothing to send: `tooLarge`, with a clear error for the run's response.
 * The stored transcript is never changed. Never throws.
 *
 * @example trimContext(context, 4 * 1024 * 1024) // { kind: "fits", context, droppedMessages: 0 }
 */
export function trimContext(
  context: AgentContext,
  maxBytes = DEFAULT_MAX_CONTEXT_BYTES,
): TrimmedContext {
  const { messages } = context;
  let total = 0;
  for (const message of messages) total += sizeOf(message);
  if (total <= maxBytes) return { kind: "fits", context, droppedMessages: 0 };
  let suffix = 0;
  let cut = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    suffix += sizeOf(messages[i] as AgentMessage);
    if (suffix > maxBytes) break;
    if (messages[i]?.role === "user") cut = i;
  }
  if (cut === -1) {
    return {
      kind: "tooLarge",
      error: `the conversation's latest turn is over the ${maxBytes}-byte context cap (maxContextBytes); nothing was sent to the model`,
    };
  }
  return {
    kind: "fits",
    context: { ...context, messages: messages.slice(cut) },
    droppedMessages: cut,
  };
}
