import type { AgentMessage, AgentToolCall, AssistantMessage } from "../types/index.js";

/**
 * Keys tool calls in transcript order, each unique among the keys given so far: a call's id
 * when that is still free, else `<id>#<n>` with the smallest n above the id's previous repeat
 * whose key is free. A model may send an id that looks like a key (`c#1` in one turn, then
 * `c` twice): the second `c` gets `c#2`, never a key another call has.
 */
class CallKeyRegister {
  private readonly taken = new Set<string>();
  private readonly repeats = new Map<string, number>();

  /** The next call with model id `id` gets this key. */
  keyFor(id: string): string {
    let n = this.repeats.get(id) ?? 0;
    let key = id;
    while (this.taken.has(key)) {
      n += 1;
      key = `${id}#${n}`;
    }
    this.repeats.set(id, n);
    this.taken.add(key);
    return key;
  }
}

/**
 * Gives each call of a batch its `key`, unique in the session whatever ids the model sends:
 * the model's id the first time the session's transcript uses it, `<id>#<n>` for the n-th
 * repeat (in an earlier message, or earlier in the same one), with n raised past any key an
 * earlier call already has. Keys follow from the transcript alone, so a resumed run (on any
 * coordinator) derives the same ones; a resumed batch is a suffix of its message's calls.
 * Never throws.
 *
 * @example // a model that numbers calls per message: "call_0" in turn 1, then again in turn 2
 * assignCallKeys(messages, assistant, calls) // turn 2's call gets key "call_0#1"
 * @example // ids "c", "c", "c#1" in one message get keys "c", "c#1", "c#1#1"
 */
export function assignCallKeys(
  messages: readonly AgentMessage[],
  assistant: AssistantMessage,
  calls: AgentToolCall[],
): void {
  const register = new CallKeyRegister();
  const position = messages.lastIndexOf(assistant);
  const earlier = position === -1 ? messages : messages.slice(0, position);
  for (const message of earlier) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) if (block.type === "toolCall") register.keyFor(block.id);
  }
  const keys = assistant.content.flatMap((block) =>
    block.type === "toolCall" ? [register.keyFor(block.id)] : [],
  );
  const offset = keys.length - calls.length;
  calls.forEach((call, i) => {
    call.key = keys[offset + i] ?? call.id;
  });
}
