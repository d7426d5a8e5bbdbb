/**
 * A light server-sent-events watcher for the gateway scenario: one `GET` on a connection of its
 * own (`node:http`, no agent), parsed per the SSE format as bytes arrive, each event's data
 * read as a `BusEvent` and stamped with the wall clock (`Date.now()`) at arrival, the clock
 * the publishers stamp `ts` with. A thousand of these run in the bench process.
 */
import { type ClientRequest, request } from "node:http";

/** One event as the watcher received it. */
export interface WatchedEvent {
  seq: number;
  type: string;
  runId: string;
  live: boolean;
  /** The publisher's wall clock at publish (`BusEvent.ts`, ms). */
  ts: number;
  /** This process's wall clock at arrival (ms). */
  receivedAt: number;
}

/** An open watcher. */
export interface SseWatcher {
  /** The HTTP status the stream answered. */
  status: number;
  /** Called for each event as it arrives. */
  onEvent: (event: WatchedEvent) => void;
  close(): void;
}

/** The event of one SSE block (`event:`/`data:` lines), if its data is a bus event. */
function parseBlock(block: string, receivedAt: number): WatchedEvent | undefined {
  const data = block
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .join("\n");
  if (!data) return undefined;
  const event = JSON.parse(data) as {
    seq: number;
    type: string;
    runId: string;
    ts: number;
    live?: boolean;
  };
  return {
    seq: event.seq,
    type: event.type,
    runId: event.runId,
    live: event.live === true,
    ts: event.ts,
    receivedAt,
  };
}

/**
 * Opens `url` as an event stream; resolves once the response headers came (any status).
 * `onEvent` may be replaced after; events before that go to the one given.
 */
export function openSseWatcher(
  url: string,
  onEvent: (event: WatchedEvent) => void,
): Promise<SseWatcher> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined;
    req = request(url, { agent: false, headers: { accept: "text/event-stream" } }, (res) => {
      const watcher: SseWatcher = {
        status: res.statusCode ?? 0,
        onEvent,
        close: () => req?.destroy(),
      };
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const receivedAt = Date.now();
        buffer += chunk;
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const event = parseBlock(buffer.slice(0, end), receivedAt);
          buffer = buffer.slice(end + 2);
          if (event) watcher.onEvent(event);
          end = buffer.indexOf("\n\n");
        }
      });
      res.on("error", () => undefined); // closed by `close`
      resolve(watcher);
    });
    req.on("error", reject);
    req.end();
  });
}
