import { sumRunUsage } from "@yiem/core";
import { defineRoute, type GatewayServices, json } from "../http/route.js";
import { seesAllSessions } from "../keys/gatewayKey.js";
import {
  abortSchema,
  errorSchema,
  sessionDetailSchema,
  sessionListQuerySchema,
  sessionListSchema,
} from "../schemas.js";
import { expectVisibleSession } from "./sessionAccess.js";

/** Sessions listed when the query names no limit. */
const DEFAULT_LIST_LIMIT = 20;

/** `GET /v1/sessions`: the sessions the key sees, newest activity first. */
export const listSessionsRoute = defineRoute({
  method: "GET",
  path: "/v1/sessions",
  summary:
    "The sessions this key sees (its own; every session started through a gateway with sessions: all), newest activity first, with agent, last activity and usage. Page with ?before=<lastActivity of the last one>.",
  scope: "read",
  query: sessionListQuerySchema,
  responses: { 200: { description: "the sessions", schema: sessionListSchema } },
  async handle({ key, query, services }) {
    const owner = seesAllSessions(key) ? undefined : key.name;
    const listed = await services.store.listSessions(
      owner,
      query.limit ?? DEFAULT_LIST_LIMIT,
      query.before,
    );
    const sessions = await Promise.all(
      listed.map(({ sessionId, lastActivity }) =>
        summarizeSession(services, sessionId, lastActivity),
      ),
    );
    return json(200, { sessions });
  },
});

/** `GET /v1/sessions/{id}`: one session's agent, transcript and usage. */
export const sessionDetailRoute = defineRoute({
  method: "GET",
  path: "/v1/sessions/{id}",
  summary: "One session: its agent, owner, transcript, usage and last activity.",
  scope: "read",
  responses: {
    200: { description: "the session", schema: sessionDetailSchema },
    404: { description: "no such session for this key", schema: errorSchema },
  },
  async handle({ key, params, services }) {
    const sessionId = params.id ?? "";
    await expectVisibleSession(services, key, sessionId);
    return json(200, await describeSession(services, sessionId));
  },
});

/** `POST /v1/sessions/{id}/abort`: aborts the session's open run. */
export const abortSessionRoute = defineRoute({
  method: "POST",
  path: "/v1/sessions/{id}/abort",
  summary:
    "Aborts the session's open run wherever its calls run (recorded, so a parked run is stopped too). aborted: false when it had no open run.",
  scope: "submit",
  responses: {
    200: { description: "what the abort did", schema: abortSchema },
    404: { description: "no such session for this key", schema: errorSchema },
  },
  async handle({ key, params, services }) {
    const sessionId = params.id ?? "";
    await expectVisibleSession(services, key, sessionId);
    const outcome = await services.client.abort(sessionId);
    if (outcome.kind === "noOpenRun") return json(200, { aborted: false });
    return json(200, { aborted: true, runId: outcome.runId });
  },
});

/**
 * A session as the gateway lists it: agent, owner, last activity and usage, from the session's
 * usage summary (`YiemClient.sessionUsage`): no transcript is read for a listed session.
 */
async function summarizeSession(services: GatewayServices, sessionId: string, listedAt: number) {
  const [usage, facts] = await Promise.all([
    services.client.sessionUsage(sessionId),
    sessionFacts(services, sessionId),
  ]);
  const { lastEvent, ...named } = facts;
  return { ...named, lastActivity: Math.max(lastEvent ?? 0, listedAt), usage };
}

/** What every view of a session names: its agent and owner (when known) and its last event's time. */
async function sessionFacts(services: GatewayServices, sessionId: string) {
  const { store } = services;
  const [agent, owner, lastEvent] = await Promise.all([
    store.agentOf(sessionId),
    store.ownerOf(sessionId),
    store.latestEventTime(sessionId),
  ]);
  return {
    sessionId,
    ...(agent !== undefined ? { agent } : {}),
    ...(owner !== undefined ? { owner } : {}),
    lastEvent,
  };
}

/** A session as the gateway shows it: agent, owner, transcript, usage, last activity. */
async function describeSession(services: GatewayServices, sessionId: string) {
  const [transcript, facts] = await Promise.all([
    services.client.messages(sessionId),
    sessionFacts(services, sessionId),
  ]);
  const { lastEvent, ...named } = facts;
  return { ...named, lastActivity: lastEvent ?? 0, usage: sumRunUsage(transcript), transcript };
}
