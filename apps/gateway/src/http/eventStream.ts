import type { ServerResponse } from "node:http";

/**
 * Starts a server-sent-event response on `res`: status 200 with the event-stream headers (no
 * caching, no proxy buffering), then a comment every `heartbeatMs` so idle connections stay
 * open through proxies. Returns what stops the heartbeat; the caller ends `res`.
 *
 * @example const stopHeartbeat = openEventStream(res, services.heartbeatMs);
 */
export function openEventStream(res: ServerResponse, heartbeatMs: number): () => void {
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    "X-Content-Type-Options": "nosniff",
  });
  const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), heartbeatMs);
  return () => clearInterval(heartbeat);
}
