import type { ToolCallContent } from "../types/index.js";
import type { CompletionParts } from "./completionParts.js";
import { emptyParts } from "./completionParts.js";
import {
  firstChoice,
  isJsonObject,
  type JsonObject,
  readContent,
  readReasoning,
  stringOrUndefined,
} from "./jsonShape.js";

/**
 * Assembles streamed `chat.completion.chunk`s into `CompletionParts`.
 *
 * Content, reasoning (`reasoning_content` / `reasoning` fields, and `thinking` content parts)
 * and refusal deltas are concatenated; tool call deltas are merged by their `index` (the id
 * and name usually arrive first, the arguments in many pieces); the last `finish_reason`,
 * `usage` (the final chunk with empty `choices` when `include_usage` is on) and `model` win.
 * Only the choice with `index` 0 is read: the chunks of other choices (a request with
 * `n` > 1) are skipped. Never throws; odd chunks are ignored.
 *
 * @example
 * const acc = new StreamAccumulator();
 * for await (const chunk of stream) process.stdout.write(acc.push(chunk));
 * const parts = acc.finish();
 */
export class StreamAccumulator {
  private readonly parts: CompletionParts = emptyParts();
  /**
   * The calls being assembled, by `index`, in their received form (see
   * `CompletionParts.toolCalls`); `rawArguments` grows piece by piece.
   */
  private readonly calls = new Map<number, ToolCallContent>();
  private chunkCount = 0;

  /** Number of well-formed chunks seen so far. */
  get chunks(): number {
    return this.chunkCount;
  }

  /** Adds one chunk; returns the answer (or refusal) text it carried (empty when none). */
  push(chunk: unknown): string {
    if (!isJsonObject(chunk)) return "";
    this.chunkCount++;
    const model = stringOrUndefined(chunk.model);
    if (model) this.parts.model = model;
    if (isJsonObject(chunk.usage)) this.parts.usage = chunk.usage;
    const choice = firstChoice(chunk.choices);
    if (!choice) return "";
    const finish = stringOrUndefined(choice.finish_reason);
    if (finish) this.parts.finishReason = finish;
    return isJsonObject(choice.delta) ? this.pushDelta(choice.delta) : "";
  }

  /** The accumulated parts; tool calls in `index` order. */
  finish(): CompletionParts {
    const indexes = [...this.calls.keys()].sort((a, b) => a - b);
    const toolCalls = indexes.map((index) => this.calls.get(index)!);
    return { ...this.parts, toolCalls };
  }

  private pushDelta(delta: JsonObject): string {
    const { text, thinking } = readContent(delta.content);
    const refusal = stringOrUndefined(delta.refusal) ?? "";
    this.parts.text += text;
    this.parts.refusal += refusal;
    this.parts.thinking += readReasoning(delta) + thinking;
    if (Array.isArray(delta.tool_calls)) {
      for (const [position, callDelta] of delta.tool_calls.entries()) {
        if (isJsonObject(callDelta)) this.pushToolCallDelta(callDelta, position);
      }
    }
    return text + refusal;
  }

  private pushToolCallDelta(delta: JsonObject, position: number): void {
    const index = typeof delta.index === "number" ? delta.index : position;
    let call = this.calls.get(index);
    if (!call) {
      call = { type: "toolCall", id: "", name: "", arguments: {} };
      this.calls.set(index, call);
    }
    const id = stringOrUndefined(delta.id);
    if (id) call.id = id;
    const fn = isJsonObject(delta.function) ? delta.function : {};
    const name = stringOrUndefined(fn.name);
    if (name) call.name = call.name && call.name !== name ? call.name + name : name;
    const piece = stringOrUndefined(fn.arguments);
    if (piece !== undefined) call.rawArguments = (call.rawArguments ?? "") + piece;
  }
}
