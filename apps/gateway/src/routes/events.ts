import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { BusEvent } from "@yiem/core";
import { hashApiKey } from "@yiem/core";
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
    "The session's events as server-sent events: `id:` the event's number, `event:` its type, `data:` its JSON. Authenticated by the bearer key, or by ?token= (an event-stream token, for EventSource). Replays the stored events after Last-Event-ID (or ?from=; from the start without either), then follows live, each event once, in order; streamed text (messageUpdate, live) has no id and is never replayed. A comment every 15 s keeps the connection open.",
  scope: "read",
  acceptsStreamToken: true,
  query: eventsQuerySchema,
  responses: {
    200: { description: "the event stream", mediaType: "text/event-stream" },
    404: { description: "no such session for this key", schema: errorSchema },
  },
  async handle({ req, res, key, params, query, services }) {
    const sessionId = params.id ?? "";
    await expectVisibleSession(services, key, sessionId);
    const afterSeq = lastEventIdOf(req.headers["last-event-id"]) ?? query.from ?? 0;
    const { signal, release } = streamSignal(services, res, key);
    const stopHeartbeat = openEventStream(res, services.heartbeatMs);
    res.write(`retry: 1000\n: events of ${sessionId} after ${afterSeq}\n\n`);
    try {
      await streamEvents(services, res, sessionId, afterSeq, signal);
    } catch (err) {
      if (!signal.aborted)
        services.log.warn({ sessionId, err: (err as Error).message }, "event stream failed");
    } finally {
      stopHeartbeat();
      release();
      res.end();
    }
    return { kind: "streamed" };
  },
});

/** Writes each event of the session after `afterSeq` until `signal`, waiting when the client reads slowly. */
async function streamEvents(
  services: GatewayServices,
  res: ServerResponse,
  sessionId: string,
  afterSeq: number,
  signal: AbortSignal,
): Promise<void> {
  const events = services.client.events(sessionId, { afterSeq, signal });
  for await (const event of events) {
    if (!res.write(formatEvent(event))) await drained(res, signal);
    if (signal.aborted) return;
  }
}

/** One event as SSE: a stored one with its number as `id`, a live one (streamed text) without. */
export function formatEvent(event: BusEvent): string {
  const id = event.live ? "" : `id: ${event.seq}\n`;
  return `${id}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
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
 * `?token=`, for `EventSource` (which sends no headers, so cannot send the key). Kept an hour
 * from its last use, so an EventSource that reconnects keeps it.
 */
export const streamTokenRoute = defineRoute({
  method: "POST",
  path: "/v1/sessions/{id}/events/token",
  summary:
    "A token that opens this session's event stream as ?token= (for EventSource, which sends no headers); valid for this session only, an hour from its last use.",
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
      sessionId,
    });
    const url = `/v1/sessions/${encodeURIComponent(sessionId)}/events?token=${token}`;
    return json(200, { token, expiresInS, url });
  },
});
