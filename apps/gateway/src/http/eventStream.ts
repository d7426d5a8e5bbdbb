import type { ServerResponse } from "node:http";

/**
 * Starts a server-sent-event response on `res`: status 200 with the event-stream headers (no
 * caching, no proxy buffering), then a comment every `heartbeatMs` so idle connections stay
 * open through proxies. No heartbeat is written while the client has not taken what was sent
 * (the socket waits for `drain`), so a client that stopped reading is not kept "active" by
 * them; when it has taken nothing for a whole heartbeat interval while something waited,
 * `onStalled` is called (once). Returns what stops the heartbeat; the caller ends `res`.
 *
 * @example const stopHeartbeat = openEventStream(res, services.heartbeatMs, cutReader);
 */
export function openEventStream(
  res: ServerResponse,
  heartbeatMs: number,
  onStalled?: () => void,
): () => void {
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    "X-Content-Type-Options": "nosniff",
  });
  let drained = false;
  let waitedLastBeat = false;
  const onDrain = () => {
    drained = true;
  };
  res.on("drain", onDrain);
  const heartbeat = setInterval(() => {
    const waiting = res.writableNeedDrain;
    if (waiting && waitedLastBeat && !drained) {
      clearInterval(heartbeat);
      onStalled?.();
      return;
    }
    waitedLastBeat = waiting;
    drained = false;
    if (!waiting) res.write(": heartbeat\n\n");
  }, heartbeatMs);
  return () => {
    clearInterval(heartbeat);
    res.off("drain", onDrain);
  };
}
