import { pipeline, Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Dispatcher } from "undici";
// Two of undici's files, not its index: the index loads every part of undici (fetch,
// WebSocket, EventSource, mocks, caches), some 15 ms of a coordinator's start.
import requestOn from "undici/lib/api/api-request.js";
import { getGlobalDispatcher } from "undici/lib/global.js";

type FetchInput = Parameters<typeof fetch>[0];
type FetchInit = NonNullable<Parameters<typeof fetch>[1]>;

/** Statuses whose responses carry no body (the `Response` constructor refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** Statuses that redirect (the global `fetch` follows them). */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * A `fetch` for the `openai` SDK's requests to the model server, over undici's `request` (the
 * HTTP client under Node's own `fetch`, on the same global dispatcher, so a proxy set with
 * undici's `setGlobalDispatcher` still applies) without the WHATWG request machinery: Node's
 * `fetch` clones every request it sends and tees its body, where here the body goes out as it
 * is and the answer is read as a Node stream. On streamed chat completions this took the SDK's
 * CPU per call from about 1.4 ms to about 1.0 ms (docs/PERFORMANCE.md, "Sessions").
 *
 * Behaves as `fetch` for what the SDK sends. A request it does not send itself (a `Request`
 * object, a body other than a string or bytes) and a response that redirects go to the global
 * `fetch`, which follows redirects. A gzip, deflate or brotli body is decoded. A connection
 * failure rejects with undici's error (the SDK reports it as an `APIConnectionError` with that
 * cause), an abort through `signal` with an `AbortError`, before or during the body.
 *
 * @example new OpenAI({ apiKey, baseURL, fetch: createLlmFetch() })
 */
export function createLlmFetch(): typeof fetch {
  return async (input: FetchInput, init?: FetchInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : undefined;
    const body = init?.body ?? undefined;
    if (url === undefined || !(body === undefined || isPlainBody(body))) return fetch(input, init);
    const target = new URL(url);
    const answer = await requestOn.call(getGlobalDispatcher(), {
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: (init?.method ?? "GET").toUpperCase() as Dispatcher.HttpMethod,
      headers: headerRecord(init?.headers),
      body,
      signal: init?.signal ?? undefined,
    });
    if (REDIRECT_STATUSES.has(answer.statusCode) && answer.headers.location !== undefined) {
      await answer.body.dump();
      return fetch(input, init);
    }
    return toResponse(answer);
  };
}

function isPlainBody(body: FetchInit["body"]): body is string | Uint8Array {
  return typeof body === "string" || body instanceof Uint8Array;
}

/** The request's headers as one record (names lower-cased, repeated names joined, as `Headers` does). */
function headerRecord(headers: FetchInit["headers"]): Record<string, string> {
  const record: Record<string, string> = {};
  if (!headers) return record;
  for (const [name, value] of new Headers(headers)) record[name] = value;
  return record;
}

/** undici's answer as a WHATWG `Response`, its body decoded when the server encoded it. */
function toResponse(answer: Dispatcher.ResponseData): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.append(name, value);
  }
  const init = { status: answer.statusCode, headers };
  if (NULL_BODY_STATUSES.has(answer.statusCode)) {
    answer.body.resume();
    return new Response(null, init);
  }
  const body = decodeBody(answer.body, headers.get("content-encoding"));
  return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, init);
}

/** The body with its content coding undone (`gzip`, `deflate`, `br`); any other as it came. */
function decodeBody(body: Readable, coding: string | null): Readable {
  const decoder = decoderFor(coding?.trim().toLowerCase());
  if (!decoder) return body;
  pipeline(body, decoder, () => undefined); // an error destroys both; the reader sees it
  return decoder;
}

function decoderFor(coding: string | undefined) {
  if (coding === "gzip" || coding === "x-gzip") return createGunzip();
  if (coding === "deflate") return createInflate();
  if (coding === "br") return createBrotliDecompress();
  return undefined;
}
