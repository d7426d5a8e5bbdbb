import type { IncomingMessage, ServerResponse } from "node:http";

/** The request headers a browser may send cross-origin. */
const ALLOWED_HEADERS =
  "Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Yiem-Session, Mcp-Session-Id, Mcp-Protocol-Version";

/**
 * Applies CORS for `origins` (`GATEWAY_CORS_ORIGINS`): a request from a listed origin gets
 * `Access-Control-Allow-Origin` with that origin; any other origin gets no CORS header, so the
 * browser keeps the answer from its page. Returns true when it answered a preflight (OPTIONS)
 * itself: 204 for a listed origin, 403 otherwise.
 */
export function applyCors(
  req: IncomingMessage,
  res: ServerResponse,
  origins: readonly string[],
): boolean {
  const origin = req.headers.origin;
  const allowed = origin !== undefined && origins.includes(origin);
  if (origin !== undefined) res.setHeader("Vary", "Origin");
  if (allowed) {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader(
      "Access-Control-Expose-Headers",
      "Retry-After, X-Yiem-Session, X-Yiem-Run, Mcp-Session-Id",
    );
  }
  if (req.method !== "OPTIONS") return false;
  if (!allowed) {
    res.writeHead(403).end();
    return true;
  }
  res.writeHead(204, {
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
    "Access-Control-Max-Age": "600",
  });
  res.end();
  return true;
}
