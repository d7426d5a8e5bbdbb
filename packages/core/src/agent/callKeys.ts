import type { AgentMessage, AgentToolCall, AssistantMessage } from "../types/index.js";

/**
 * Gives each call of a batch its `key`: the model's id the first time the session's
 * transcript uses it, `<id>#<n>` for the n-th repeat (in an earlier message, or earlier in the
 * same one). Keys follow from the transcript alone, so a resumed run derives the same ones;
 * a resumed batch is a suffix of its message's calls. Never throws.
 *
 * @example // a model that numbers calls per message: "call_0" in turn 1, then again in turn 2
 * assignCallKeys(messages, assistant, calls) // turn 2's call gets key "call_0#1"
 */
export function assignCallKeys(
  messages: readonly AgentMessage[],
  assistant: AssistantMessage,
  calls: AgentToolCall[],
): void {
  const uses = new Map<string, number>();
  const use = (id: string) => {
    const n = uses.get(id) ?? 0;
    uses.set(id, n + 1);
    return n;
  };
  const position = messages.lastIndexOf(assistant);
  const earlier = position === -1 ? messages : messages.slice(0, position);
  for (const message of earlier) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) if (block.type === "toolCall") use(block.id);
  }
  const keys = assistant.content.flatMap((block) => {
    if (block.type !== "toolCall") return [];
    const n = use(block.id);
    return [n === 0 ? block.id : `${block.id}#${n}`];
  });
  const offset = keys.length - calls.length;
  calls.forEach((call, i) => {
    call.key = keys[offset + i] ?? call.id;
  });
}
