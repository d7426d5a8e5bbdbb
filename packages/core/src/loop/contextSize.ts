import type { AgentMessage } from "../types/index.js";

const sizes = new WeakMap<AgentMessage, number>();

/**
 * Leaves a tool-call block's parsed `arguments` out of the measure when it also keeps the
 * model's text (`rawArguments`): the request sends that text alone, so a call's arguments
 * count once.
 */
function countArgumentsOnce(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const block = value as { type?: unknown; rawArguments?: unknown };
  if (block.type !== "toolCall" || typeof block.rawArguments !== "string") return value;
  const { arguments: _parsed, ...rest } = value as Record<string, unknown>;
  return rest;
}

/**
 * Bytes of a message's JSON (UTF-8), each tool call's arguments counted once, as the request
 * carries them; measured once per message object. What `trimContext` holds under its cap.
 *
 * @example messageBytes({ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 0 }) // 61
 */
export function messageBytes(message: AgentMessage): number {
  const known = sizes.get(message);
  if (known !== undefined) return known;
  const size = Buffer.byteLength(JSON.stringify(message, countArgumentsOnce), "utf8");
  sizes.set(message, size);
  return size;
}
