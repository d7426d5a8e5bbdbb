/**
 * One tool call as received from the server, before mapping. `arguments` is the raw value:
 * normally a JSON string, sometimes an object from lenient servers, absent when none came.
 */
export interface RawToolCall {
  id?: string;
  name: string;
  arguments?: unknown;
}

/**
 * What a plain or streamed completion carried, in a shape shared by both modes, so one
 * function (`partsToAssistantMessage`) maps either to an `AssistantMessage`.
 */
export interface CompletionParts {
  text: string;
  thinking: string;
  toolCalls: RawToolCall[];
  finishReason?: string;
  usage?: unknown;
  model?: string;
}

/** Empty parts, to fill in. */
export function emptyParts(): CompletionParts {
  return { text: "", thinking: "", toolCalls: [] };
}
