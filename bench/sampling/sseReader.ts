/**
 * Event-stream readers of the `gatewayReaders` scenario, each on a connection of its own
 * (`node:http`, no agent), with a bearer key: a stalled one, whose response is paused once its
 * headers came (the socket stops reading; the kernel's buffers fill), and a live one that
 * reads everything and only counts bytes and `agentEnd` events (a thousand readers of 1 MB
 * events must not parse them).
 */
import { type ClientRequest, request } from "node:http";

/** An open reader. */
export interface SseReader {
  /** The HTTP status the stream answered. */
  status: number;
  /** Bytes read so far (0 for a stalled reader). */
  bytes(): number;
  /** `agentEnd` events read so far. */
  agentEnds(): number;
  /** True once the gateway closed the connection. */
  closed(): boolean;
  close(): void;
}

const AGENT_END = Buffer.from("event: agentEnd\n");

/** Opens `GET url` with `secret`; resolves once the headers came. `stalled`: never reads on. */
export function openSseReader(url: string, secret: string, stalled: boolean): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined;
    let bytes = 0;
    let agentEnds = 0;
    let ended = false;
    let tail = Buffer.alloc(0);
    req = request(
      url,
      { agent: false, headers: { authorization: `Bearer ${secret}`, accept: "text/event-stream" } },
      (res) => {
        res.once("close", () => {
          ended = true;
        });
        res.on("error", () => undefined); // a cut connection is a closed one
        if (stalled) res.pause();
        else {
          res.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
            const seen = Buffer.concat([tail, chunk.subarray(0, AGENT_END.length)]);
            for (let at = seen.indexOf(AGENT_END); at >= 0; at = seen.indexOf(AGENT_END, at + 1)) {
              if (at < tail.length) agentEnds++; // straddles the previous chunk
            }
            for (
              let at = chunk.indexOf(AGENT_END);
              at >= 0;
              at = chunk.indexOf(AGENT_END, at + 1)
            ) {
              agentEnds++;
            }
            tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - AGENT_END.length + 1)));
          });
        }
        resolve({
          status: res.statusCode ?? 0,
          bytes: () => bytes,
          agentEnds: () => agentEnds,
          closed: () => ended,
          close: () => req?.destroy(),
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}
