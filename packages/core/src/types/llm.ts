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
  /**
   * Awaited before each request the call sends to the model server: its first (`attempt` 0)
   * and every retry. A gate that may hold a request back (shared provider limits,
   * `limitLlmCall`); the call checks its signal after it, so an abort during the wait ends the
   * call as aborted. Its throws are ignored. A call that sends no requests of its own (a
   * function that is no adapter) may never call it.
   */
  beforeRequest?: (attempt: number) => Promise<void>;
  /**
   * Told each request that failed, before the call retries it or gives up: the HTTP status
   * when the server answered, and the delay it asked for (`retry-after-ms`, `retry-after`, or
   * on a 429 the `x-ratelimit-reset-*` headers). Awaited; its throws are ignored.
   */
  onRequestFailed?: (failure: LlmRequestFailure) => Promise<void> | void;
  /**
   * The tenant the call is made for (`AgentLoopConfig.tenant`): a shared provider limit serves
   * the calls of waiting tenants in turn (`limitLlmCall`). Absent: no tenant.
   */
  tenant?: string;
  /**
   * Told when a request starts waiting at a gate outside the process before it is sent (its
   * turn under a shared provider limit, `limitLlmCall`); the function it returns is told when
   * that wait ends. Never told for a request sent at once. The coordinator lends the run's
   * slot to other runs meanwhile. Its throws are not caught: it must not throw.
   */
  onGateWait?: () => () => void;
}

/** A request of an `LlmCall` that failed (`LlmCallOptions.onRequestFailed`). */
export interface LlmRequestFailure {
  /** 0 for the first request, then 1, 2… for the retries. */
  attempt: number;
  /** The HTTP status, when the server answered. */
  status?: number;
  /** The wait the server asked for before the next request, in milliseconds. */
  retryAfterMs?: number;
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
