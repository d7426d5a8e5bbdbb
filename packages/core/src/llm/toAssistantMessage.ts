import { normalizeToolCallBlocks } from "../tools/extractToolCalls.js";
import type { AssistantContent, AssistantMessage, StopReason } from "../types/index.js";
import type { CompletionParts } from "./completionParts.js";
import { mapUsage } from "./mapUsage.js";

/** The identity fields every assistant message from this adapter carries. */
export interface AssistantMeta {
  api: string;
  provider: string;
  model: string;
}

/**
 * Maps what a completion carried to an `AssistantMessage`: thinking, then text, then the
 * refusal as text, then tool calls, read by `normalizeToolCallBlocks` (arguments parsed, or
 * `{}` with the payload kept in `rawArguments` when refused; a missing id generated). Tool
 * calls present mean `stopReason: "toolUse"` whatever `finish_reason` says; else a refusal
 * means `stopReason: "refusal"`; a `content_filter` finish becomes `stopReason: "error"` with
 * an `errorMessage`. Never throws.
 */
export function partsToAssistantMessage(
  parts: CompletionParts,
  meta: AssistantMeta,
): AssistantMessage {
  const content = readableContent(parts);
  for (const block of normalizeToolCallBlocks(parts.toolCalls)) content.push(block);
  const message: AssistantMessage = {
    role: "assistant",
    content,
    api: meta.api,
    provider: meta.provider,
    model: parts.model || meta.model,
    stopReason: stopReasonOf(parts),
    timestamp: Date.now(),
  };
  const usage = mapUsage(parts.usage);
  if (usage) message.usage = usage;
  if (parts.finishReason === "content_filter") {
    message.errorMessage = "The model server stopped the answer: content_filter";
  }
  return message;
}

/** Thinking, text and refusal of `parts` as content blocks, in that order. */
function readableContent(parts: CompletionParts): AssistantContent[] {
  const content: AssistantContent[] = [];
  if (parts.thinking) content.push({ type: "thinking", thinking: parts.thinking });
  if (parts.text) content.push({ type: "text", text: parts.text });
  if (parts.refusal) content.push({ type: "text", text: parts.refusal });
  return content;
}

function stopReasonOf(parts: CompletionParts): StopReason {
  const hasToolCalls = parts.toolCalls.length > 0;
  if (parts.refusal && !hasToolCalls) return "refusal";
  return mapStopReason(parts.finishReason, hasToolCalls);
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

/**
 * The assistant message of a stream that failed after some of it came: `stopReason: "error"`
 * with `errorMessage`, keeping the thinking and text that arrived (the live deltas showed
 * them) and the usage if any; tool calls, possibly cut, are left out so none runs.
 */
export function partialFailedMessage(
  meta: AssistantMeta,
  errorMessage: string,
  parts: CompletionParts,
): AssistantMessage {
  const message = failedAssistantMessage(meta, "error", errorMessage);
  message.content = readableContent(parts);
  if (parts.model) message.model = parts.model;
  const usage = mapUsage(parts.usage);
  if (usage) message.usage = usage;
  return message;
}
