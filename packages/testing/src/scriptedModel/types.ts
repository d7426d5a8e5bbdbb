/** One tool call the scripted model makes. A string `arguments` is sent verbatim. */
export type ScriptedToolCall = {
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
};

/**
 * A response's `usage` block as an OpenAI-compatible server sends it, e.g.
 * `{ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150,
 * prompt_tokens_details: { cached_tokens: 100 }, completion_tokens_details: { reasoning_tokens: 12 } }`.
 */
export type ScriptedUsage = Record<string, unknown>;

/**
 * One scripted answer. `usage` on a text or tool calls reply is sent as the response's usage
 * (streamed: in the usage chunk, when the request asks for it); without it the server sends
 * an estimate (a token per four characters).
 * - `text`: an answer, with optional reasoning (sent as `reasoning_content`); streamed, its
 *   text goes out in `textChunks` deltas (default 4), `chunkDelayMs` apart (default 0).
 * - `toolCalls`: parallel tool calls; `argumentChunks` splits each call's arguments into that
 *   many deltas when streaming.
 * - `httpError`: an HTTP error with OpenAI's `{error: {message, type, code}}` body.
 * - `malformed`: `body` sent verbatim with status 200 (JSON content type, or SSE when it
 *   starts with `data:`).
 * - `recorded`: a provider's recorded answer replayed as it is: `body` with status 200, as
 *   SSE when it starts with `data:` or `event:` (written one event at a time, as a real
 *   stream arrives), else as JSON. Whatever the request asked, the body is not changed.
 * - `hang`: never answers; ends when the client disconnects or the server closes.
 */
export type ScriptedReply =
  | {
      kind: "text";
      text: string;
      thinking?: string;
      delayMs?: number;
      finishReason?: "stop" | "length";
      textChunks?: number;
      chunkDelayMs?: number;
      usage?: ScriptedUsage;
    }
  | {
      kind: "toolCalls";
      calls: ScriptedToolCall[];
      text?: string;
      delayMs?: number;
      argumentChunks?: number;
      usage?: ScriptedUsage;
    }
  | { kind: "httpError"; status: number; message: string; retryAfterSeconds?: number }
  | { kind: "malformed"; body: string }
  | { kind: "recorded"; body: string }
  | { kind: "hang" };

/** The body of a Chat Completions request, as received. */
export interface ChatCompletionRequestBody {
  model?: string;
  messages?: unknown[];
  tools?: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** A request the server received; `index` counts chat completion requests from 0. */
export interface ScriptedRequest {
  body: ChatCompletionRequestBody;
  headers: Record<string, string | string[] | undefined>;
  index: number;
  /** When it arrived (`Date.now()`). */
  receivedAt: number;
  /**
   * The tokens the server's `limits` counted for it once admitted (its prompt, then its
   * completion once answered); absent without limits and for a request they refused.
   */
  limitedTokens?: number;
}

/**
 * A provider's rate limit (`ScriptedModelOptions.limits`): at most `requests` requests and
 * `tokens` tokens (a request's prompt as the server estimates it, a token per four characters
 * of its messages, plus its answer's completion tokens) in any `windowMs` (default 60 000).
 */
export interface ScriptedRateLimits {
  requests?: number;
  tokens?: number;
  windowMs?: number;
}

/** Options of `startScriptedModelServer`. */
export interface ScriptedModelOptions {
  /** Replies consumed in order, one per chat completion request. */
  replies?: ScriptedReply[];
  /** Decides the reply when `replies` is empty. */
  respond?: (request: ScriptedRequest) => ScriptedReply | Promise<ScriptedReply>;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default: a free port. */
  port?: number;
  /** The model name in responses and in `GET /v1/models`. Default `scripted-model`. */
  model?: string;
  /**
   * Limits the server as a provider does: a request past them is answered 429
   * (`rate_limit_exceeded`, with `retry-after` in whole seconds and `retry-after-ms`), takes
   * no reply of the script and is listed in `limited`. Default: no limit.
   */
  limits?: ScriptedRateLimits;
  /**
   * Counts a request's tool definitions in its prompt tokens (its usage and its `limits`), as
   * providers do. Default false: its messages only.
   */
  countToolTokens?: boolean;
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  /** e.g. `http://127.0.0.1:40123/v1`. */
  baseURL: string;
  /** Every chat completion request received, in order (those answered 429 too). */
  requests: ScriptedRequest[];
  /** The requests its `limits` refused with a 429, in order. */
  limited: ScriptedRequest[];
  /** Appends replies to the script. */
  push(...replies: ScriptedReply[]): void;
  /** Stops listening and ends every open connection, hanging ones included. */
  close(): Promise<void>;
}
