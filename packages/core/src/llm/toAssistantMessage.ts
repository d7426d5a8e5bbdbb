import { normalizeToolCallBlocks } from "../tools/extractToolCalls.js";
import type { AssistantContent, AssistantMessage, LlmUsage, StopReason } from "../types/index.js";
import type { CompletionParts } from "./completionParts.js";
import { isJsonObject, numberOrUndefined } from "./jsonShape.js";

/** The identity fields every assistant message from this adapter carries. */
export interface AssistantMeta {
  api: string;
  provider: string;
  model: string;
}

/**
 * Maps what a completion carried to an `AssistantMessage`: thinking, then text, then tool
 * calls, read by `normalizeToolCallBlocks` (arguments parsed, or `{}` with the payload kept
 * in `rawArguments` when refused; a missing id generated). Tool calls present mean
 * `stopReason: "toolUse"` whatever `finish_reason` says; a `content_filter` finish becomes
 * `stopReason: "error"` with an `errorMessage`. Never throws.
 */
export function partsToAssistantMessage(
  parts: CompletionParts,
  meta: AssistantMeta,
): AssistantMessage {
  const content: AssistantContent[] = [];
  if (parts.thinking) content.push({ type: "thinking", thinking: parts.thinking });
  if (parts.text) content.push({ type: "text", text: parts.text });
  for (const block of normalizeToolCallBlocks(parts.toolCalls)) content.push(block);
  const message: AssistantMessage = {
    role: "assistant",
    content,
    api: meta.api,
    provider: meta.provider,
    model: parts.model || meta.model,
    stopReason: mapStopReason(parts.finishReason, parts.toolCalls.length > 0),
    timestamp: Date.now(),
  };
  const usage = mapUsage(parts.usage);
  if (usage) message.usage = usage;
  if (parts.finishReason === "content_filter") {
    message.errorMessage = "The model server stopped the answer: content_filter";
  }
  return message;
}

/**
 * Maps an OpenAI `finish_reason` to a `StopReason`: `stop` → `stop`, `length` → `length`,
 * `tool_calls` / `function_call` → `toolUse`, `content_filter` → `error`; anything else
 * (including none) → `stop`. Tool calls present always mean `toolUse`.
 */
export function mapStopReason(finishReason: string | undefined, hasToolCalls: boolean): StopReason {
  if (hasToolCalls) return "toolUse";
  switch (finishReason) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "toolUse";
    case "content_filter":
      return "error";
    default:
      return "stop";
  }
}

/**
 * Maps OpenAI usage (`prompt_tokens`, `completion_tokens`, `total_tokens`) to `LlmUsage`;
 * `undefined` when the server sent none. A missing total is the sum of the other two.
 */
export function mapUsage(usage: unknown): LlmUsage | undefined {
  if (!isJsonObject(usage)) return undefined;
  const inputTokens = numberOrUndefined(usage.prompt_tokens) ?? 0;
  const outputTokens = numberOrUndefined(usage.completion_tokens) ?? 0;
  const totalTokens = numberOrUndefined(usage.total_tokens) ?? inputTokens + outputTokens;
  return { inputTokens, outputTokens, totalTokens };
}

/**
 * The assistant message that stands for a failed call: no content, `stopReason` `error` or
 * `aborted`, and the reason in `errorMessage`.
 */
export function failedAssistantMessage(
  meta: AssistantMeta,
  stopReason: "error" | "aborted",
  errorMessage: string,
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: meta.api,
    provider: meta.provider,
    model: meta.model,
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}
