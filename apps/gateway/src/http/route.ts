import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger, YiemClient } from "@yiem/core";
import type { z } from "zod";
import type { GatewayKey, Scope } from "../keys/gatewayKey.js";
import type { GatewayStore } from "../state/gatewayStore.js";
import type { KeySlots, SlotKind } from "../state/keySlots.js";
import type { GatewayError } from "./gatewayError.js";

/** What every route's handler may use. */
export interface GatewayServices {
  client: YiemClient;
  store: GatewayStore;
  log: Logger;
  /** How long `POST /v1/runs?wait=true` waits for the answer before answering 202. */
  waitMs: number;
  /** How often an event stream sends a heartbeat comment. */
  heartbeatMs: number;
  /** Closes when the gateway shuts down: event streams end. */
  closing: AbortSignal;
  /** Fires when `key` is taken out of the keys file (read again): its open streams end. */
  revocation(key: GatewayKey): AbortSignal;
  /** The open streams and long requests each key holds on this gateway (capped per key). */
  slots: KeySlots;
  /** The bounds of each event stream's queue for its reader (`GATEWAY_STREAM_QUEUE_*`). */
  streamQueue: { events: number; bytes: number };
  /** The hosts A2A push notification webhooks may name (`YIEM_A2A_PUSH_HOSTS`); none: push is off. */
  a2aPushHosts: readonly string[];
}

/** A request as a route's handler sees it: authenticated, its body and query validated. */
export interface RouteRequest<Body, Query> {
  req: IncomingMessage;
  res: ServerResponse;
  key: GatewayKey;
  params: Record<string, string>;
  query: Query;
  body: Body;
  services: GatewayServices;
}

/** What a handler answers: a JSON reply, or `streamed` when it wrote the response itself. */
export type RouteReply =
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "streamed" };

/** One documented response of a route (for the OpenAPI document). */
export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  /** The media type when not JSON (`text/event-stream`). */
  mediaType?: string;
}

/**
 * One endpoint: method and path (`/v1/sessions/{id}`), the scope a key needs (none: public),
 * the zod schemas that validate its body and query (and that the OpenAPI document is made
 * from), its documented responses, and its handler. Each file of `routes/` exports its routes.
 */
export interface Route<Body = unknown, Query = unknown> {
  method: "GET" | "POST" | "DELETE";
  path: string;
  summary: string;
  scope?: Scope;
  /**
   * Also authenticated by an event-stream token (`?token=`, for `EventSource`, which sends no
   * headers): valid only for the session of the route's `id`.
   */
  acceptsStreamToken?: boolean;
  body?: z.ZodType<Body>;
  query?: z.ZodType<Query>;
  /**
   * What the request holds its connection open for, if it does (per its query): an event
   * `stream`, or a `long` wait for a run's answer; taken from the key's slots before the
   * handler runs (429 past the key's cap) and given back when it ends.
   */
  holds?(query: Query): SlotKind | undefined;
  /**
   * The body of this route's error answers, when not the gateway's `{ error: { code,
   * message, field? } }` (the OpenAI-compatible face answers in OpenAI's shape).
   */
  errorBody?: (err: GatewayError) => unknown;
  responses: Record<number, RouteResponse>;
  handle(request: RouteRequest<Body, Query>): Promise<RouteReply>;
}

/** `route` as written, with its body and query types inferred from its schemas. */
export function defineRoute<Body = undefined, Query = undefined>(
  route: Route<Body, Query>,
): Route<Body, Query> {
  return route;
}

/** A JSON reply. */
export function json(status: number, body: unknown, headers?: Record<string, string>): RouteReply {
  return { kind: "json", status, body, ...(headers ? { headers } : {}) };
}
