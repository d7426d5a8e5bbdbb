import { isIP } from "node:net";
import type { Agent, Response } from "undici";
import { checkFetchAddress, type FetchAllowList } from "./addressPolicy.js";
import { type AddressResolver, createGuardedLookup, FetchRefusedError } from "./guardedLookup.js";

/** The statuses whose `Location` a guarded fetch follows (as a GET). */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** How a guarded fetch runs. */
export interface GuardedFetchOptions {
  allow: FetchAllowList;
  signal: AbortSignal;
  /** Redirects followed at most; one more is an error. */
  maxRedirects: number;
  /** The resolver behind the guarded lookup (the system's by default). */
  resolve?: AddressResolver;
}

/** The final response of a guarded fetch and the URL it came from (after redirects). */
export interface GuardedResponse {
  response: Response;
  url: URL;
  /** Closes the connections of this fetch; call it once the body is read or dropped. */
  close(): void;
}

/** Refuses a URL whose host is an IP literal outside the allow list (Node calls no lookup for those). */
function checkLiteralHost(url: URL, allow: FetchAllowList): void {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) === 0) return;
  const refusal = checkFetchAddress(host, allow);
  if (refusal) throw new FetchRefusedError(`${refusal.address}: ${refusal.rule}`);
}

/** The next URL of a redirect response, or `undefined` for any other response. */
function redirectTarget(response: Response, from: URL): URL | undefined {
  if (!REDIRECT_STATUSES.has(response.status)) return undefined;
  const location = response.headers.get("location");
  if (!location) return undefined;
  const next = new URL(location, from);
  if (next.protocol !== "http:" && next.protocol !== "https:") {
    throw new Error(`redirect to ${next.protocol} refused (${next.href})`);
  }
  return next;
}

/** The `FetchRefusedError` behind a failed fetch (undici wraps it in `cause`), if any. */
function refusalIn(err: unknown): FetchRefusedError | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof FetchRefusedError) return e;
  }
  return undefined;
}

/** One request to `url`, with a refusal said as `refused <url>: <reason>`. */
async function fetchHop(url: URL, dispatcher: Agent, options: GuardedFetchOptions, via?: URL) {
  const where = via ? `${url.href} (redirected from ${via.href})` : url.href;
  try {
    checkLiteralHost(url, options.allow);
    const { fetch } = await import("undici");
    return await fetch(url, { signal: options.signal, redirect: "manual", dispatcher });
  } catch (err) {
    const refusal = refusalIn(err);
    if (refusal) throw new FetchRefusedError(`refused ${where}: ${refusal.message}`);
    throw err;
  }
}

/**
 * GETs `url` with every address checked against `options.allow`: an IP literal before
 * connecting, a host name through a guarded `lookup` on the socket's own resolution, and
 * each redirect hop again (followed by hand, at most `maxRedirects`). A refusal throws
 * `FetchRefusedError` (`refused http://127.0.0.1/: 127.0.0.1: loopback (127.0.0.0/8)`).
 *
 * @example
 * const { response, close } = await fetchGuarded(new URL("https://example.com"), options);
 * try { await response.text(); } finally { close(); }
 */
export async function fetchGuarded(
  url: URL,
  options: GuardedFetchOptions,
): Promise<GuardedResponse> {
  // Loaded on first use: a process without httpFetch never pays for undici.
  const { Agent } = await import("undici");
  const dispatcher = new Agent({
    connect: { lookup: createGuardedLookup(options.allow, options.resolve) },
  });
  const close = () => void dispatcher.destroy().catch(() => undefined);
  try {
    let current = url;
    let previous: URL | undefined;
    for (let hop = 0; ; hop++) {
      const response = await fetchHop(current, dispatcher, options, previous);
      const next = redirectTarget(response, current);
      if (!next) return { response, url: current, close };
      await response.body?.cancel().catch(() => undefined);
      if (hop >= options.maxRedirects)
        throw new Error(`more than ${options.maxRedirects} redirects`);
      previous = current;
      current = next;
    }
  } catch (err) {
    close();
    throw err;
  }
}
