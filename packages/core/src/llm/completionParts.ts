import type { ToolCallContent } from "../types/index.js";

/**
 * What a plain or streamed completion carried, in a shape shared by both modes, so one
 * function (`partsToAssistantMessage`) maps either to an `AssistantMessage`.
 */
export interface CompletionParts {
  text: string;
  thinking: string;
  /** The model's refusal (`refusal` of the message or its deltas); "" when it answered. */
  refusal: string;
  /**
   * The tool calls as received, not read yet: `arguments` is `{}` and `rawArguments` the
   * text the server sent (absent when none came), `id` empty when none came.
   * `partsToAssistantMessage` reads them (`normalizeToolCallBlocks`).
   */
  toolCalls: ToolCallContent[];
  finishReason?: string;
  usage?: unknown;
  model?: string;
}

/** Empty parts, to fill in. */
export function emptyParts(): CompletionParts {
  return { text: "", thinking: "", refusal: "", toolCalls: [] };
}
