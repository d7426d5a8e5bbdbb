import OpenAI, { APIError } from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { ResponseFormatJSONSchema } from "openai/resources/shared";
import { readSetting, settingOr } from "../settings/readSettings.js";
import type {
  AssistantMessage,
  LlmCall,
  LlmCallOptions,
  LlmRequest,
  ResponseFormat,
} from "../types/index.js";
import type { CompletionParts } from "./completionParts.js";
import { describeLlmError } from "./describeLlmError.js";
import { createLlmFetch } from "./llmFetch.js";
import { requestedWaitMs } from "./rateLimitHeaders.js";
import { readCompletion } from "./readCompletion.js";
import { isRetryableError, type RetryPolicy, retryDelayMs, sleep } from "./retryPolicy.js";
import { StreamAccumulator } from "./streamAccumulator.js";
import {
  type AssistantMeta,
  failedAssistantMessage,
  partialFailedMessage,
  partsToAssistantMessage,
} from "./toAssistantMessage.js";

/** The `api` every message from this adapter carries. */
export const OPENAI_CHAT_COMPLETIONS_API = "openai-chat-completions";

/** The API key used when none is given: local OpenAI-compatible servers need none. */
const PLACEHOLDER_API_KEY = "not-needed";

/** Options of `createOpenAILlmCall`. */
export interface OpenAILlmCallOptions {
  /** The model name sent with every request. */
  model: string;
  /** Server root, e.g. `http://127.0.0.1:8000/v1`. Default: `OPENAI_BASE_URL`, else OpenAI. */
  baseURL?: string;
  /** Default: `OPENAI_API_KEY`, else a placeholder (local servers need none). */
  apiKey?: string;
  /** A ready client; `baseURL` and `apiKey` are then ignored. Its own retries are disabled. */
  client?: OpenAI;
  /** Stream the answer (SSE). Default false. */
  stream?: boolean;
  /** Retries after the first attempt on connection errors, 408, 409, 429 and 5xx. Default 3. */
  maxRetries?: number;
  /** Cap on every retry delay, including one a `retry-after` header asks for. Default 10 000. */
  maxRetryDelayMs?: number;
  /** The first backoff delay, doubled on each retry (with jitter). Default 250. */
  initialRetryDelayMs?: number;
  /** Sampling temperature; omitted from the request when not set. */
  temperature?: number;
  /** More fields merged into every request body (e.g. `top_k` for vLLM). */
  extraBody?: Record<string, unknown>;
  /** The `provider` of the returned messages. Default `"openai"`. */
  provider?: string;
}

/** Everything one call needs, resolved once from the options. */
interface Settings {
  client: OpenAI;
  options: OpenAILlmCallOptions;
  policy: RetryPolicy;
  meta: AssistantMeta;
  secrets: string[];
}

/** An attempt's outcome; a failed stream keeps what it had carried in `partial`. */
type Attempt =
  | { ok: true; message: AssistantMessage }
  | { ok: false; error: unknown; partial?: CompletionParts };

/**
 * An `LlmCall` over the `openai` SDK that works with any OpenAI-compatible server
 * (OpenAI, vLLM, llama.cpp, Ollama, ...), plain or streamed.
 *
 * Contract: never throws. Transient failures (connection errors, 408, 409, 429, 5xx) are
 * retried with capped exponential backoff that honours `retry-after`; other failures become
 * an assistant message with `stopReason: "error"` and `errorMessage: "<status> <message>"`;
 * an abort through `signal` stops at once (no retry) with `stopReason: "aborted"`. The API
 * key never appears in an `errorMessage`. Streamed, it tells `onTextDelta` (the call's third
 * argument) each piece of answer text as it arrives; a stream that fails part way (an error
 * event, a cut connection) keeps the text and thinking that came in its error message. A
 * refusal is the answer's text with `stopReason: "refusal"`. A request's `responseFormat`
 * goes as `response_format: { type: "json_schema", json_schema: { name, schema, strict } }`.
 * The call's `beforeRequest` is awaited before each request it sends (the first and every
 * retry) and `onRequestFailed` told each failed one, with the wait the server asked for
 * (shared provider limits hook in there: `features/flowControl`).
 *
 * @example
 * const llmCall = createOpenAILlmCall({ model: "qwen3", baseURL: "http://127.0.0.1:8000/v1", stream: true });
 * const answer = await llmCall(formatMsgForLLM(ctx), controller.signal);
 */
export function createOpenAILlmCall(options: OpenAILlmCallOptions): LlmCall {
  const settings = resolveSettings(options);
  return (request, signal, callOptions) =>
    callWithRetries(settings, request, signal, callOptions ?? {});
}

function resolveSettings(options: OpenAILlmCallOptions): Settings {
  const envKey = readSetting("openaiApiKey");
  const apiKey = options.apiKey ?? envKey ?? PLACEHOLDER_API_KEY;
  const baseURL = settingOr("openaiBaseUrl", options.baseURL);
  const client =
    options.client ?? new OpenAI({ apiKey, baseURL, maxRetries: 0, fetch: createLlmFetch() });
  const secrets = [apiKey, client.apiKey, envKey].filter(
    (key): key is string => typeof key === "string" && key !== PLACEHOLDER_API_KEY,
  );
  return {
    client,
    options,
    secrets,
    policy: {
      maxRetries: Math.max(0, options.maxRetries ?? 3),
      initialDelayMs: options.initialRetryDelayMs ?? 250,
      maxDelayMs: options.maxRetryDelayMs ?? 10_000,
    },
    meta: {
      api: OPENAI_CHAT_COMPLETIONS_API,
      provider: options.provider ?? "openai",
      model: options.model,
    },
  };
}

type TextDeltaSink = LlmCallOptions["onTextDelta"];

async function callWithRetries(
  settings: Settings,
  request: LlmRequest,
  signal: AbortSignal | undefined,
  callOptions: LlmCallOptions,
): Promise<AssistantMessage> {
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) return abortedMessage(settings);
    await callOptions.beforeRequest?.(attempt).catch(() => undefined);
    if (signal?.aborted) return abortedMessage(settings);
    const outcome = await attemptOnce(settings, request, signal, callOptions.onTextDelta);
    if (outcome.ok) return outcome.message;
    await tellFailure(callOptions, attempt, outcome.error);
    if (signal?.aborted) return abortedMessage(settings);
    const retry = isRetryableError(outcome.error) && attempt < settings.policy.maxRetries;
    if (!retry) return errorMessage(settings, outcome.error, outcome.partial);
    const waited = await sleep(retryDelayMs(attempt, outcome.error, settings.policy), signal);
    if (!waited) return abortedMessage(settings);
  }
}

/** Tells `onRequestFailed` how a request failed; its throws change nothing. */
async function tellFailure(callOptions: LlmCallOptions, attempt: number, error: unknown) {
  if (!callOptions.onRequestFailed) return;
  const status = error instanceof APIError ? error.status : undefined;
  const headers = error instanceof APIError ? error.headers : undefined;
  const retryAfterMs = requestedWaitMs(status, headers);
  try {
    await callOptions.onRequestFailed({
      attempt,
      ...(status === undefined ? {} : { status }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  } catch {
    // An observer of the call: its failure must not fail the call.
  }
}

async function attemptOnce(
  settings: Settings,
  request: LlmRequest,
  signal: AbortSignal | undefined,
  onTextDelta: TextDeltaSink,
): Promise<Attempt> {
  if (settings.options.stream) return runStreamed(settings, request, signal, onTextDelta);
  try {
    return { ok: true, message: await runPlain(settings, request, signal) };
  } catch (error) {
    return { ok: false, error };
  }
}

async function runPlain(
  settings: Settings,
  request: LlmRequest,
  signal: AbortSignal | undefined,
): Promise<AssistantMessage> {
  const body: ChatCompletionCreateParamsNonStreaming = { ...baseBody(settings, request) };
  const response: unknown = await settings.client.chat.completions.create(body, {
    signal,
    maxRetries: 0,
  });
  const read = readCompletion(response);
  if (!read.ok) return failedAssistantMessage(settings.meta, "error", read.error);
  return partsToAssistantMessage(read.parts, settings.meta);
}

/** Tells `sink` a piece of text; a sink that throws changes nothing. */
function reportDelta(sink: TextDeltaSink, text: string): void {
  if (!sink || !text) return;
  try {
    sink(text);
  } catch {
    // An observer of the stream: its failure must not fail the call.
  }
}

async function runStreamed(
  settings: Settings,
  request: LlmRequest,
  signal: AbortSignal | undefined,
  onTextDelta: TextDeltaSink,
): Promise<Attempt> {
  const body: ChatCompletionCreateParamsStreaming = {
    ...baseBody(settings, request),
    stream: true,
    stream_options: { include_usage: true },
  };
  const accumulator = new StreamAccumulator();
  try {
    const stream = await settings.client.chat.completions.create(body, { signal, maxRetries: 0 });
    // The SDK ends the iteration quietly on abort, so the signal is checked afterwards.
    for await (const chunk of stream) reportDelta(onTextDelta, accumulator.push(chunk));
  } catch (error) {
    // An error event or a cut connection part way: what came stays (the deltas showed it).
    return { ok: false, error, partial: accumulator.finish() };
  }
  if (signal?.aborted) return { ok: true, message: abortedMessage(settings) };
  if (accumulator.chunks === 0) {
    const error = "Malformed response from the model server: the stream carried no chunk";
    return { ok: true, message: failedAssistantMessage(settings.meta, "error", error) };
  }
  return { ok: true, message: partsToAssistantMessage(accumulator.finish(), settings.meta) };
}

/** The request fields shared by both modes; `tools` is omitted when there are none. */
function baseBody(settings: Settings, request: LlmRequest) {
  const { options } = settings;
  return {
    ...options.extraBody,
    model: options.model,
    // Our ChatMessage is the wire form; it also allows image parts in tool messages and
    // `reasoning_content` on assistant messages, which the SDK's narrower types omit.
    messages: request.messages as unknown as ChatCompletionMessageParam[],
    ...(request.tools.length > 0 ? { tools: request.tools } : {}),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(request.responseFormat
      ? { response_format: toResponseFormat(request.responseFormat) }
      : {}),
  };
}

/** A structured-output request as the Chat Completions API takes it. */
function toResponseFormat(format: ResponseFormat): ResponseFormatJSONSchema {
  const { name, schema, strict } = format;
  return {
    type: "json_schema",
    json_schema: { name, schema, ...(strict === undefined ? {} : { strict }) },
  };
}

function abortedMessage(settings: Settings): AssistantMessage {
  return failedAssistantMessage(settings.meta, "aborted", "Request aborted");
}

function errorMessage(
  settings: Settings,
  error: unknown,
  partial: CompletionParts | undefined,
): AssistantMessage {
  const description = describeLlmError(error, settings.secrets);
  if (partial) return partialFailedMessage(settings.meta, description, partial);
  return failedAssistantMessage(settings.meta, "error", description);
}
