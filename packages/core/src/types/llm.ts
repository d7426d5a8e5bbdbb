import type { AssistantMessage } from "./messages.js";

/** A content part of a Chat Completions message. */
export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

/** A tool call inside a Chat Completions assistant message. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A message in OpenAI Chat Completions form. */
export type ChatMessage =
  | { role: "system"; content: string | ChatContentPart[] }
  | { role: "user"; content: string | ChatContentPart[] }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: ChatToolCall[];
      reasoning_content?: string;
    }
  | { role: "tool"; tool_call_id: string; content: string | ChatContentPart[] };

/** A tool offered to the model in Chat Completions form. */
export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * The JSON Schema the model's answer must match, as an OpenAI-compatible call sends it
 * (`response_format: { type: "json_schema", json_schema: { name, schema, strict } }`).
 */
export interface ResponseFormat {
  name: string;
  schema: Record<string, unknown>;
  strict?: boolean;
}

/** What `formatMsgForLLM` returns and an `LlmCall` receives. */
export interface LlmRequest {
  messages: ChatMessage[];
  tools: ChatTool[];
  /** Asks for an answer matching a JSON Schema (structured output). Default: free text. */
  responseFormat?: ResponseFormat;
}

/** What the caller of one `LlmCall` may ask for besides the answer. */
export interface LlmCallOptions {
  /**
   * Told each piece of answer text as it arrives, when the call streams. Pieces of an
   * attempt that failed and was retried have been reported already. Its throws are ignored.
   */
  onTextDelta?: (delta: string) => void;
}

/**
 * Calls a model. Contract: never throws for model or network failures; returns an assistant
 * message with `stopReason: "error"` (or `"aborted"` when `signal` fired) and `errorMessage`.
 */
export type LlmCall = (
  request: LlmRequest,
  signal?: AbortSignal,
  options?: LlmCallOptions,
) => Promise<AssistantMessage>;
