import {
  type AgentTool,
  type AgentToolResult,
  type PartialResultCallback,
  readSetting,
  type ToolArgs,
  type ToolExecuteFn,
} from "@yiem/core";
import type { Headers, Response } from "undici";
import { type FetchAllowList, parseFetchAllowList } from "../toolSupport/addressPolicy.js";
import { normalizeArgs, readNumber, readString, validatorFrom } from "../toolSupport/args.js";
import { createDeadline, type Deadline, describeFetchError } from "../toolSupport/deadline.js";
import { fetchGuarded } from "../toolSupport/guardedFetch.js";
import { FetchRefusedError } from "../toolSupport/guardedLookup.js";
import { textResult } from "../toolSupport/results.js";

const MAX_BYTES_LIMIT = 10_485_760;
const DEFAULT_MAX_BYTES = 1_048_576;
const TIMEOUT_LIMIT_MS = 120_000;
const DEFAULT_TIMEOUT_MS = 15_000;
/** At most one progress report per this many milliseconds, plus a final one. */
const PROGRESS_INTERVAL_MS = 100;
/** Redirects followed at most, each hop checked again. */
const MAX_REDIRECTS = 10;

/** The progress `httpFetch` reports through `onPartialResult` while the body arrives. */
export interface HttpFetchProgress {
  receivedBytes: number;
  /** From `Content-Length`, when the server sent one for an unencoded body. */
  totalBytes?: number;
}

/** The checked arguments of one fetch. */
interface FetchArgs {
  url: URL;
  maxBytes: number;
  timeoutMs: number;
}

/** Reads and checks the arguments; only absolute http(s) URLs pass. */
function parseArgs(args: ToolArgs): FetchArgs {
  const raw = readString(args, "url");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`invalid arguments: "url" is not an absolute URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`httpFetch only fetches http:// and https:// URLs, not ${url.protocol}`);
  }
  const maxBytes = readNumber(args, "maxBytes", {
    min: 1,
    max: MAX_BYTES_LIMIT,
    default: DEFAULT_MAX_BYTES,
    integer: true,
  });
  const timeoutMs = readNumber(args, "timeoutMs", {
    min: 1,
    max: TIMEOUT_LIMIT_MS,
    default: DEFAULT_TIMEOUT_MS,
    integer: true,
  });
  return {
    url,
    maxBytes: maxBytes ?? DEFAULT_MAX_BYTES,
    timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
}

/**
 * True for content types worth showing as text: `text/*` and anything JSON, XML or
 * JavaScript (`application/ld+json`, `image/svg+xml`, `application/javascript`, ...).
 *
 * @example isTextual("application/json; charset=utf-8") // true
 * @example isTextual("image/png") // false
 */
export function isTextual(contentType: string): boolean {
  const essence = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return essence.startsWith("text/") || /json|xml|javascript|ecmascript/.test(essence);
}

/** `Content-Length` as a byte count, when it describes the bytes we will receive. */
function expectedBytes(headers: Headers): number | undefined {
  const encoding = headers.get("content-encoding");
  if (encoding && encoding.toLowerCase() !== "identity") return undefined;
  const length = Number(headers.get("content-length") ?? Number.NaN);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** Calls `onPartialResult` at most once per interval, and always on `final`. */
function progressReporter(onPartialResult: PartialResultCallback, totalBytes?: number) {
  let last = Number.NEGATIVE_INFINITY;
  return (receivedBytes: number, final = false): void => {
    const now = performance.now();
    if (!final && now - last < PROGRESS_INTERVAL_MS) return;
    last = now;
    const progress: HttpFetchProgress =
      totalBytes === undefined ? { receivedBytes } : { receivedBytes, totalBytes };
    onPartialResult(progress);
  };
}

/** A body read up to a byte limit. */
interface BodyRead {
  bytes: Uint8Array;
  truncated: boolean;
}

/** Joins chunks into one buffer of `length` bytes. */
function concat(chunks: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * Streams `response.body` up to `maxBytes`, reporting progress; stops reading (and cancels
 * the stream) as soon as more than `maxBytes` arrived. Rejects when the signal aborts.
 */
async function readBody(
  response: Response,
  maxBytes: number,
  report: (receivedBytes: number, final?: boolean) => void,
): Promise<BodyRead> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  let done = false;
  try {
    while (received <= maxBytes) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        break;
      }
      chunks.push(next.value);
      received += next.value.byteLength;
      report(received);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
  }
  report(received, true);
  const kept = Math.min(received, maxBytes);
  return { bytes: concat(chunks, received).subarray(0, kept), truncated: received > maxBytes };
}

/** True when `TextDecoder` supports the encoding `label`. */
function knowsEncoding(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/** Decodes text with the declared charset when `TextDecoder` knows it, else UTF-8. */
function decodeText(bytes: Uint8Array, contentType: string, truncated: boolean): string {
  const charset = /charset="?([\w.:-]+)"?/i.exec(contentType)?.[1] ?? "utf-8";
  const decoder = knowsEncoding(charset) ? new TextDecoder(charset) : new TextDecoder("utf-8");
  // A cut body may end inside a character: stream mode drops that partial sequence.
  return decoder.decode(bytes, { stream: truncated });
}

/** Maps a failed fetch or body read to the tool's error message. */
function fetchError(err: unknown, url: URL, deadline: Deadline, timeoutMs: number): Error {
  if (deadline.timedOut()) return new Error(`httpFetch timed out after ${timeoutMs} ms`);
  if (deadline.callerAborted()) return new Error("httpFetch aborted");
  if (err instanceof FetchRefusedError) {
    return new Error(`httpFetch ${err.message} (YIEM_HTTP_FETCH_ALLOW can allow it)`);
  }
  return new Error(`httpFetch failed for ${url.href}: ${describeFetchError(err)}`);
}

/** What one completed fetch produced, before it becomes the tool's text. */
interface Fetched {
  response: Response;
  /** The URL the response came from, after redirects. */
  finalUrl: URL;
  body: BodyRead;
  durationMs: number;
}

/** Builds the result: status line, content type, then the body or a size note. */
function toResult(requested: URL, maxBytes: number, fetched: Fetched): AgentToolResult {
  const { response, body, durationMs, finalUrl } = fetched;
  const contentType = response.headers.get("content-type") ?? "application/octet-stream";
  const lines = [
    `HTTP ${response.status} ${response.statusText}`.trim(),
    `Content-Type: ${contentType}`,
  ];
  if (body.truncated) lines.push(`[truncated: showing the first ${maxBytes} bytes]`);
  const shown = isTextual(contentType)
    ? decodeText(body.bytes, contentType, body.truncated)
    : `<${body.bytes.byteLength} bytes of ${contentType}>`;
  const details: Record<string, unknown> = {
    url: requested.href,
    status: response.status,
    contentType,
    bytes: body.bytes.byteLength,
    truncated: body.truncated,
    durationMs,
  };
  if (finalUrl.href !== requested.href) details.finalUrl = finalUrl.href;
  return textResult(`${lines.join("\n")}\n\n${shown}`, details);
}

/**
 * Lifecycle §17 `prepareArguments`: trims the URL and turns numeric strings in `maxBytes` and
 * `timeoutMs` into numbers.
 */
export function prepareArguments(args: ToolArgs): ToolArgs {
  return normalizeArgs(args, ["maxBytes", "timeoutMs"]);
}

/**
 * Lifecycle §17 `validateRequiredArgs`: an error text when `url` is missing, not absolute or
 * not http(s), or `maxBytes`/`timeoutMs` are not integers in range; else `undefined`.
 */
export const validateRequiredArgs: (args: ToolArgs) => string | undefined =
  validatorFrom(parseArgs);

/** GETs `args.url` within what `allow` permits; see {@link executeTool}. */
async function fetchWithin(
  allow: FetchAllowList,
  args: ToolArgs,
  signal: AbortSignal | undefined,
  onPartialResult: PartialResultCallback,
): Promise<AgentToolResult> {
  const { url, maxBytes, timeoutMs } = parseArgs(args);
  if (signal?.aborted) throw new Error("httpFetch aborted");
  const deadline = createDeadline(timeoutMs, signal);
  const started = performance.now();
  let close = (): void => {};
  try {
    const options = { allow, signal: deadline.signal, maxRedirects: MAX_REDIRECTS };
    const fetched = await fetchGuarded(url, options);
    close = fetched.close;
    const { response } = fetched;
    const report = progressReporter(onPartialResult, expectedBytes(response.headers));
    const body = await readBody(response, maxBytes, report);
    const durationMs = Math.round(performance.now() - started);
    return toResult(url, maxBytes, { response, body, durationMs, finalUrl: fetched.url });
  } catch (err) {
    throw fetchError(err, url, deadline, timeoutMs);
  } finally {
    close();
    deadline.dispose();
  }
}

/** The allow list of `YIEM_HTTP_FETCH_ALLOW`, parsed once per distinct value. */
const envAllowCache = { raw: "", list: parseFetchAllowList([]) };

/** Reads `YIEM_HTTP_FETCH_ALLOW` (through the settings catalogue); throws on a bad entry. */
function readEnvAllowList(): FetchAllowList {
  const entries = readSetting("httpFetchAllow");
  const raw = entries.join(",");
  if (raw !== envAllowCache.raw) {
    envAllowCache.list = parseFetchAllowList(entries);
    envAllowCache.raw = raw;
  }
  return envAllowCache.list;
}

/**
 * Lifecycle §17 `executeTool`: GETs `args.url` and returns at most `maxBytes` of its body.
 * Every address it would connect to is checked first (an IP literal in the URL, each address
 * a host name resolves to, each redirect hop, at most 10): loopback, private, link-local,
 * unique-local, cloud metadata and other special-purpose addresses are refused unless
 * `YIEM_HTTP_FETCH_ALLOW` names the host or a range holding the address; a refusal throws
 * `httpFetch refused <url>: <address>: <rule> ...`. Streams the body, reporting
 * {@link HttpFetchProgress} at most every 100 ms plus once at the end. Any HTTP status is a
 * result (the model sees a 404 page); a network failure, a non-http(s) URL, the timeout
 * (`httpFetch timed out after N ms`, covering every hop) or an abort of `signal`
 * (`httpFetch aborted`) throws.
 *
 * @example
 * await executeTool("c1", { url: "https://example.com" }, undefined, console.log)
 * // text: "HTTP 200 OK\nContent-Type: text/html\n\n<!doctype html>..."
 */
export async function executeTool(
  _toolCallId: string,
  args: ToolArgs,
  signal: AbortSignal | undefined,
  onPartialResult: PartialResultCallback,
): Promise<AgentToolResult> {
  return fetchWithin(readEnvAllowList(), args, signal, onPartialResult);
}

/** What {@link createHttpFetchTool} builds an `httpFetch` from. */
export interface HttpFetchOptions {
  /**
   * Host names, IP addresses or CIDR ranges httpFetch may reach although the guard would
   * refuse them (`["127.0.0.1/32", "internal.example"]`); none when empty.
   */
  allow: readonly string[];
}

/**
 * An `httpFetch` tool that may also reach what `options.allow` names (and ignores
 * `YIEM_HTTP_FETCH_ALLOW`). Throws on an allow entry that is no host, address or range.
 *
 * @example registerTool(store, createHttpFetchTool({ allow: ["10.0.0.0/8"] }))
 */
export function createHttpFetchTool(options: HttpFetchOptions): AgentTool {
  const allow = parseFetchAllowList(options.allow);
  const execute: ToolExecuteFn = (_id, args, signal, onPartialResult) =>
    fetchWithin(allow, args, signal, onPartialResult);
  return { ...describeTool(), execute };
}

/**
 * Lifecycle §17 `getTool`: the `httpFetch` tool (parallel-safe, idempotent: it only GETs),
 * allowing what `YIEM_HTTP_FETCH_ALLOW` names; throws when that variable holds a bad entry.
 *
 * @example getBuiltinTools().find((tool) => tool.name === "httpFetch")
 */
export function getTool(): AgentTool {
  readEnvAllowList();
  return { ...describeTool(), execute: executeTool };
}

/** Everything of the tool but its `execute`. */
function describeTool(): Omit<AgentTool, "execute"> {
  return {
    name: "httpFetch",
    label: "HTTP Fetch",
    description:
      "GET an http(s) URL and return its status, content type and body (as text when the " +
      "content is textual), up to maxBytes. Reports download progress. Loopback, private, " +
      "link-local and cloud metadata addresses are refused.",
    inputSchema: {
      type: "object",
      properties: {
        url: {
          type: "string",
          pattern: "^https?://",
          description: "Absolute http:// or https:// URL to GET.",
        },
        maxBytes: {
          type: "integer",
          minimum: 1,
          maximum: MAX_BYTES_LIMIT,
          default: DEFAULT_MAX_BYTES,
          description: `Stop reading the body after this many bytes (default ${DEFAULT_MAX_BYTES}).`,
        },
        timeoutMs: {
          type: "integer",
          minimum: 1,
          maximum: TIMEOUT_LIMIT_MS,
          default: DEFAULT_TIMEOUT_MS,
          description: `Give up after this many milliseconds (default ${DEFAULT_TIMEOUT_MS}).`,
        },
      },
      required: ["url"],
    },
    prepareArguments,
    validateRequiredArgs,
    parallelToolExecute: true,
    idempotent: true,
  };
}
