import { SETTINGS } from "../settings/catalogue.js";
import type { AgentContext, AgentMessage } from "../types/index.js";
import { messageBytes } from "./contextSize.js";
import { leaveOutAnswer, leaveOutToolResult } from "./leftOutMessages.js";

/**
 * How a context fits its cap: as it is or trimmed (`droppedMessages` oldest messages left
 * out, `leftOut` earlier messages replaced by a placeholder), or not at all.
 */
export type TrimmedContext =
  | { kind: "fits"; context: AgentContext; droppedMessages: number; leftOut: number }
  | { kind: "tooLarge"; error: string };

/** The messages being trimmed: those from `start` on are sent; `total` is their size. */
interface Trim {
  messages: AgentMessage[];
  start: number;
  total: number;
}

/**
 * Replaces the messages of `[from, to)` that `shorten` shortens, oldest first, until the
 * context fits: each placeholder counts only when it is smaller than its message.
 */
function shortenUntilFits(
  trim: Trim,
  maxBytes: number,
  to: number,
  shorten: (message: AgentMessage) => AgentMessage | undefined,
): void {
  for (let i = trim.start; i < to && trim.total > maxBytes; i++) {
    const message = trim.messages[i] as AgentMessage;
    const short = shorten(message);
    if (!short) continue;
    const saved = messageBytes(message) - messageBytes(short);
    if (saved <= 0) continue;
    trim.messages[i] = short;
    trim.total -= saved;
  }
}

/**
 * Leaves the oldest turns out whole, cutting only before a user message (so every tool call
 * keeps its result), until the context fits or only the latest user message and what follows
 * it are left.
 */
function dropOldestTurns(trim: Trim, maxBytes: number): void {
  let removed = 0;
  for (let i = trim.start + 1; i < trim.messages.length && trim.total > maxBytes; i++) {
    removed += messageBytes(trim.messages[i - 1] as AgentMessage);
    if (trim.messages[i]?.role !== "user") continue;
    trim.start = i;
    trim.total -= removed;
    removed = 0;
  }
}

function lastIndexOf(messages: AgentMessage[], role: AgentMessage["role"]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === role) return i;
  return -1;
}

/**
 * Keeps the transcript sent to the model under `maxBytes` (bytes of the messages' JSON, each
 * tool call's arguments counted once; the system prompt always stays). When it is over, in
 * this order, each step only until it fits:
 *
 * 1. earlier tool results, oldest first, become a one-line placeholder with the size left out
 *    (`leaveOutToolResult`: call id and tool name stay, so each call keeps its result);
 * 2. the oldest turns are left out whole, cut only before a user message;
 * 3. earlier answers of the model, oldest first, have their text and tool-call arguments
 *    replaced by placeholders (`leaveOutAnswer`: each call keeps its id and name).
 *
 * "Earlier" is everything before the latest turn: the model's last message and what followed
 * it (its tool results, input that arrived since), which is never changed. When the context
 * is still over the cap, that latest turn alone is: `tooLarge`, with a clear error for the
 * run's response. The stored transcript is never changed. Never throws.
 *
 * @example trimContext(context, 4 * 1024 * 1024) // { kind: "fits", context, droppedMessages: 0, leftOut: 0 }
 */
export function trimContext(
  context: AgentContext,
  maxBytes = SETTINGS.maxContextBytes.default,
): TrimmedContext {
  let total = 0;
  for (const message of context.messages) total += messageBytes(message);
  if (total <= maxBytes) return { kind: "fits", context, droppedMessages: 0, leftOut: 0 };
  const trim: Trim = { messages: [...context.messages], start: 0, total };
  const latestTurn = Math.max(0, lastIndexOf(trim.messages, "assistant"));
  shortenUntilFits(trim, maxBytes, latestTurn, (m) =>
    m.role === "toolResult" ? leaveOutToolResult(m) : undefined,
  );
  dropOldestTurns(trim, maxBytes);
  shortenUntilFits(trim, maxBytes, latestTurn, (m) =>
    m.role === "assistant" ? leaveOutAnswer(m) : undefined,
  );
  if (trim.total > maxBytes) {
    return {
      kind: "tooLarge",
      error: `the conversation's latest turn is over the ${maxBytes}-byte context cap (maxContextBytes); nothing was sent to the model`,
    };
  }
  const sent = trim.messages.slice(trim.start);
  const leftOut = sent.filter((m, i) => m !== context.messages[trim.start + i]).length;
  return {
    kind: "fits",
    context: { ...context, messages: sent },
    droppedMessages: trim.start,
    leftOut,
  };
}
