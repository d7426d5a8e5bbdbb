import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { type EncodedBusEvent, EventReaderBehindError, hashApiKey } from "@yiem/core";
import { openEventStream } from "../http/eventStream.js";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json } from "../http/route.js";
import { errorSchema, eventsQuerySchema, streamTokenSchema } from "../schemas.js";
import { streamSignal } from "./followRun.js";
import { expectVisibleSession } from "./sessionAccess.js";

/** `GET /v1/sessions/{id}/events`: the session's events as server-sent events. */
export const sessionEventsRoute = defineRoute({
  method: "GET",
  path: "/v1/sessions/{id}/events",
  summary:
    "The session's events as server-sent events: `id:` the event's number, `event:` its type, `data:` its JSON. Authenticated by the bearer key, or by ?token= (an event-stream token, for EventSource). Replays the stored events after Last-Event-ID (or ?from=; from the start without either), then follows live, each event once, in order; streamed text (messageUpdate, live) has no id and is never replayed. A comment every 15 s keeps the connection open. A reader that stops reading is cut once the events waiting for it pass the gateway's bounds, or after it took nothing for a heartbeat interval: it resumes with Last-Event-ID and loses nothing.",
  scope: "read",
  acceptsStreamToken: true,
  query: eventsQuerySchema,
  holds: () => "stream",
  responses: {
    200: { description: "the event stream", mediaType: "text/event-stream" },
    404: { description: "no such session for this key", schema: errorSchema },
    429: {
      description: "too many requests, or event streams open for this key",
      schema: errorSchema,
    },
  },
  async handle({ req, res, key, params, query, services }) {
    const sessionId = params.id ?? "";
    await expectVisibleSession(services, key, sessionId);
    const afterSeq = lastEventIdOf(req.headers["last-event-id"]) ?? query.from ?? 0;
    const { signal, release } = streamSignal(services, res, key);
    const cut = new AbortController();
    const stopHeartbeat = openEventStream(res, services.heartbeatMs, () =>
      cut.abort("the reader took nothing for a heartbeat interval"),
    );
    res.write(`retry: 1000\n: events of ${sessionId} after ${afterSeq}\n\n`);
    const stop = AbortSignal.any([signal, cut.signal]);
    try {
      await streamEvents(services, res, sessionId, afterSeq, stop, (behind) =>
        cut.abort(behind.message),
      );
    } catch (err) {
      if (!stop.aborted && !(err instanceof EventReaderBehindError))
        services.log.warn({ sessionId, err: (err as Error).message }, "event stream failed");
    } finally {
      stopHeartbeat();
      release();
      endStream(services, res, sessionId, cut.signal);
    }
    return { kind: "streamed" };
  },
});

/**
 * Ends an event stream's response. A reader cut for falling behind is told nothing more when
 * its socket is still full (it is closed: it resumes from its `Last-Event-ID`, the last event
 * it took whole, so nothing is lost), else it gets a comment saying why before the end.
 */
function endStream(
  services: GatewayServices,
  res: ServerResponse,
  sessionId: string,
  cut: AbortSignal,
): void {
  if (!cut.aborted) {
    res.end();
    return;
  }
  services.log.info({ sessionId, reason: String(cut.reason) }, "event stream reader cut");
  if (res.writableNeedDrain) res.destroy();
  else res.end(`: cut: ${String(cut.reason)}; resume with Last-Event-ID\n\n`);
}

/**
 * Writes each event of the session after `afterSeq` until `signal`, one at a time: the next
 * only once the socket took the last (its `drain`). The session's stream holds at most the
 * bounds of `services.streamQueue` for this reader meanwhile; past them `onBehind` is told.
 * Each event is its JSON's bytes as the stream hands them over: a live event's are one
 * buffer every reader of it writes, so a reader whose socket is full holds a reference to
 * that buffer, never a copy, and no parsed event.
 */
async function streamEvents(
  services: GatewayServices,
  res: ServerResponse,
  sessionId: string,
  afterSeq: number,
  signal: AbortSignal,
  onBehind: (error: EventReaderBehindError) => void,
): Promise<void> {
  const events = services.client.encodedEvents(sessionId, {
    afterSeq,
    signal,
    maxQueuedEvents: services.streamQueue.events,
    maxQueuedBytes: services.streamQueue.bytes,
    onBehind,
  });
  for await (const event of events) {
    if (!writeEvent(res, event)) await drained(res, signal);
    if (signal.aborted) return;
  }
}

/**
 * Writes one event as SSE: a stored one with its number as `id`, a live one (streamed text)
 * without; its JSON (`event.json`, shared) between a line of its own and the blank line that
 * ends it, in one write to the socket. False when the socket's buffer is full (wait for
 * `drain`).
 */
export function writeEvent(res: ServerResponse, event: EncodedBusEvent): boolean {
  const id = event.live ? "" : `id: ${event.seq}\n`;
  res.cork();
  res.write(`${id}event: ${event.type}\ndata: `);
  res.write(event.json);
  const room = res.write("\n\n");
  res.uncork();
  return room;
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The event number of a `Last-Event-ID` header, if it has a valid one. */
function lastEventIdOf(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || text.trim() === "") return undefined;
  if (!/^\d{1,15}$/.test(text.trim())) {
    throw new GatewayError(
      400,
      "invalid_request",
      "Last-Event-ID: must be an event number",
      "Last-Event-ID",
    );
  }
  return Number(text.trim());
}

/**
 * `POST /v1/sessions/{id}/events/token`: a token that opens this session's events as
 * `?token=`, for `EventSource` (which sends no headers, so cannot send the key). It lives an
 * hour from when it was made, never renewed (an EventSource that gives up asks for a new one),
 * and is bound to the key's hash: a key rotated (same name, new hash) or revoked invalidates it.
 */
export const streamTokenRoute = defineRoute({
  method: "POST",
  path: "/v1/sessions/{id}/events/token",
  summary:
    "A token that opens this session's event stream as ?token= (for EventSource, which sends no headers); valid for this session only, an hour from when it was made (never renewed), and only while the key that made it is served unchanged (a rotated or revoked key's tokens stop working).",
  scope: "read",
  responses: {
    200: { description: "the token and the URL to open", schema: streamTokenSchema },
    404: { description: "no such session for this key", schema: errorSchema },
  },
  async handle({ key, params, services }) {
    const sessionId = params.id ?? "";
    await expectVisibleSession(services, key, sessionId);
    const token = `yst_${randomBytes(24).toString("base64url")}`;
    const expiresInS = await services.store.saveStreamToken(hashApiKey(token), {
      keyName: key.name,
      keyHash: key.hash,
      sessionId,
    });
    const url = `/v1/sessions/${encodeURIComponent(sessionId)}/events?token=${token}`;
    return json(200, { token, expiresInS, url });
  },
});
