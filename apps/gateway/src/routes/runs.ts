import { createHash, randomUUID } from "node:crypto";
import { ResponseTimeoutError, type RunAnswer, type UserInput } from "@yiem/core";
import type { z } from "zod";
import { GatewayError, notFound } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json, type RouteReply } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import {
  errorSchema,
  runAcceptedSchema,
  runAnsweredSchema,
  runQuerySchema,
  runRequestSchema,
  runStatusSchema,
} from "../schemas.js";
import { admitRun, releaseRun } from "../state/keyLimits.js";
import { type AgentField, resolveRunAgent } from "./runAgent.js";
import { expectVisibleSession, isVisibleSession } from "./sessionAccess.js";

/** The body of `POST /v1/runs`, as `startRun` takes it. */
export type RunRequest = z.infer<typeof runRequestSchema>;

/** The longest `Idempotency-Key` accepted. */
const MAX_IDEMPOTENCY_KEY = 200;

/** `POST /v1/runs`: starts a run (a new session, or one of the key's). */
export const submitRunRoute = defineRoute({
  method: "POST",
  path: "/v1/runs",
  summary:
    "Starts a run: input to a new session, or to one of the key's. 202 with its ids; with ?wait=true, 200 and the answer (202 when it takes longer than the gateway waits). An Idempotency-Key header makes a retry return the same run.",
  scope: "submit",
  body: runRequestSchema,
  query: runQuerySchema,
  holds: (query) => (query.wait === "true" ? "long" : undefined),
  responses: {
    200: { description: "the run's answer (?wait=true)", schema: runAnsweredSchema },
    202: { description: "the run is queued", schema: runAcceptedSchema },
    400: { description: "invalid request", schema: errorSchema },
    403: { description: "the key may not use this agent", schema: errorSchema },
    404: { description: "the session is not the key's", schema: errorSchema },
    409: { description: "the Idempotency-Key was used for another request", schema: errorSchema },
    429: {
      description: "too many requests, runs or requests waiting at once",
      schema: errorSchema,
    },
  },
  async handle({ req, key, body, query, services }) {
    const { runId, sessionId } = await startRun(services, key, body, idempotencyKeyOf(req.headers));
    const planned = { runId, sessionId };
    if (query.wait !== "true") return json(202, planned);
    return waitForRun(services, planned);
  },
});

/** The run a request makes: new ids, or those its Idempotency-Key stands for. */
export interface PlannedRun {
  runId: string;
  sessionId: string;
}

/** A run `startRun` queued: its ids, its agent, where its events start and when it was made. */
export interface StartedRun extends PlannedRun {
  agent: string;
  /** The number of the session's latest stored event when the run was queued. */
  afterSeq: number;
  /** When the run was submitted (epoch ms). */
  createdAt: number;
}

/**
 * Starts a run for `key` as `POST /v1/runs` does (and the chat faces, `chat.ts` and
 * `chatCompletions.ts`, with `field` `newSession`): resolves and checks the agent that will
 * run (`resolveRunAgent`: the session's current one when none is named; 403), plans its ids (a
 * session of another key is 404), admits it under the key's runs at once (429), records it and
 * queues it, naming its agent. Returns its ids, agent, and where its events start.
 * `beforeQueued` is awaited with the run once it is recorded and before it is queued (a face
 * follows its events from there: `startFollowedRun`); its failure gives the run up.
 */
export async function startRun(
  services: GatewayServices,
  key: GatewayKey,
  body: RunRequest,
  idempotencyKey?: string,
  field: AgentField = "explicit",
  beforeQueued?: (run: StartedRun) => Promise<void>,
): Promise<StartedRun> {
  const agent = await resolveRunAgent(services, key, body, field);
  const planned = await planRun(services, key, body, idempotencyKey);
  const verdict = await admitRun(services.store, services.client, key, planned.runId);
  if (verdict.kind === "limited") throw runsAtOnceError(key, verdict.retryAfterS);
  // Recorded first: a gateway that dies right after queuing the run leaves it findable.
  const owner = (await services.store.ownerOf(planned.sessionId)) ?? key.name;
  // A retried Idempotency-Key keeps the first record's start: its run may have begun.
  const first = await services.store.readRun(planned.runId);
  const afterSeq = first?.afterSeq ?? (await services.store.latestEventSeq(planned.sessionId));
  const createdAt = first?.createdAt ?? Date.now();
  const record = { sessionId: planned.sessionId, owner, afterSeq, createdAt, agent };
  await services.store.recordRun(planned.runId, record);
  const started = { ...planned, agent, afterSeq, createdAt };
  try {
    await beforeQueued?.(started);
    // The parts are checked in depth by `send` (the coordinators' rules), naming the field.
    // The run's tenant is the session's owner: provider limits and budgets per day are its.
    await services.client.send(body.input as UserInput, {
      ...sendOptionsOf(body, planned),
      agent,
      tenant: owner,
    });
  } catch (err) {
    await releaseRun(services.store, key.name, planned.runId);
    await services.store.forgetRun(planned.runId);
    throw err;
  }
  await services.store.touchSession(planned.sessionId, owner);
  return started;
}

/**
 * The ids of the run: for a retried Idempotency-Key, the ones it got the first time (a body
 * that differs is refused with 409); else a new run id, and the request's session once the
 * key owns it (claimed now when new), or a new session.
 */
async function planRun(
  services: GatewayServices,
  key: GatewayKey,
  body: RunRequest,
  idempotencyKey: string | undefined,
): Promise<PlannedRun> {
  const runId = randomUUID();
  const sessionId = body.sessionId ?? randomUUID();
  if (idempotencyKey === undefined) {
    await claimSession(services, key, sessionId, body.sessionId !== undefined);
    return { runId, sessionId };
  }
  const digest = digestOf(body);
  const stored = await services.store.reserveIdempotencyKey(key.name, idempotencyKey, {
    digest,
    runId,
    sessionId,
  });
  if (stored && stored.digest !== digest) {
    throw new GatewayError(
      409,
      "idempotency_conflict",
      "this Idempotency-Key was used for a different request",
      "Idempotency-Key",
    );
  }
  const planned = stored
    ? { runId: stored.runId, sessionId: stored.sessionId }
    : { runId, sessionId };
  await claimSession(services, key, planned.sessionId, body.sessionId !== undefined);
  return planned;
}

/**
 * Makes `key` the owner of `sessionId`, or checks it is: a session of another key, or one
 * the cluster knows that no key started, is not found for this key (unless it sees every
 * session). A new session id the client chose is claimed.
 */
async function claimSession(
  services: GatewayServices,
  key: GatewayKey,
  sessionId: string,
  named: boolean,
): Promise<void> {
  if (named) {
    const owner = await services.store.ownerOf(sessionId);
    if (owner === key.name) return;
    if (owner !== undefined || (await services.client.hasSession(sessionId))) {
      if (await isVisibleSession(services, key, sessionId)) return;
      throw notFound("session", sessionId);
    }
  }
  const claim = await services.store.claimSession(sessionId, key.name);
  if (claim === "taken") await expectVisibleSession(services, key, sessionId);
}

function sendOptionsOf(body: RunRequest, planned: PlannedRun) {
  return {
    sessionId: planned.sessionId,
    runId: planned.runId,
    ...(body.followUp !== undefined ? { followUp: body.followUp } : {}),
    ...(body.budget !== undefined ? { budget: body.budget } : {}),
  };
}

/**
 * Waits up to the gateway's wait for the run: 200 with its answer, 400 when the coordinators
 * refused it (naming why), 202 with its ids when it takes longer.
 */
async function waitForRun(services: GatewayServices, planned: PlannedRun): Promise<RouteReply> {
  const { client } = services;
  const answered = client
    .waitForAnswer(planned.runId, { sessionId: planned.sessionId, timeoutMs: services.waitMs })
    .then((answer): Outcome => ({ kind: "answer", answer }));
  const refused = pollRefusal(services, planned.runId);
  try {
    const outcome = await Promise.race([answered, refused.outcome]);
    if (outcome.kind === "refused") {
      throw new GatewayError(400, "run_refused", outcome.reason);
    }
    return json(200, { ...planned, ...outcome.answer });
  } catch (err) {
    if (err instanceof ResponseTimeoutError) return json(202, planned);
    throw err;
  } finally {
    refused.stop();
  }
}

/** How waiting for a run ended: its answer, or the coordinators' refusal. */
export type Outcome = { kind: "answer"; answer: RunAnswer } | { kind: "refused"; reason: string };

/**
 * Looks every half second whether the coordinators refused the run's request: `outcome`
 * resolves with the reason when they did (never otherwise); `stop` ends the looking.
 */
export function pollRefusal(services: GatewayServices, runId: string) {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const outcome = new Promise<Outcome>((resolve) => {
    const look = async () => {
      const reason = await services.client.requestRefusal(runId).catch(() => undefined);
      if (reason !== undefined) return resolve({ kind: "refused", reason });
      if (!stopped) timer = setTimeout(look, 500);
    };
    timer = setTimeout(look, 200);
  });
  return {
    outcome,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** `GET /v1/runs/{runId}`: where a run of a visible session stands. */
export const runStatusRoute = defineRoute({
  method: "GET",
  path: "/v1/runs/{runId}",
  summary:
    "Where a run stands: waiting, running, parked (for approval), completed (with its result) or failed (with the reason).",
  scope: "read",
  responses: {
    200: { description: "the run's status", schema: runStatusSchema },
    404: { description: "no such run for this key", schema: errorSchema },
  },
  async handle({ key, params, services }) {
    const runId = params.runId ?? "";
    const record = await services.store.readRun(runId);
    if (!record || !(await isVisibleSession(services, key, record.sessionId))) {
      throw notFound("run", runId);
    }
    const status = await services.client.runStatus(runId, { sessionId: record.sessionId });
    const base = { runId, sessionId: record.sessionId };
    if (status.status === "completed")
      return json(200, { ...base, status: "completed", result: status.answer });
    if (status.status === "failed")
      return json(200, { ...base, status: "failed", error: status.error });
    if (status.status === "unknown") return json(200, { ...base, status: "waiting" });
    return json(200, { ...base, status: status.status });
  },
});

/** The request's Idempotency-Key, checked. */
function idempotencyKeyOf(
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const value = headers["idempotency-key"];
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] : value;
  if (!text || text.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(text)) {
    throw new GatewayError(
      400,
      "invalid_request",
      `Idempotency-Key: 1–${MAX_IDEMPOTENCY_KEY} visible ASCII characters`,
      "Idempotency-Key",
    );
  }
  return text;
}

/** A digest of the request body, to tell a retry from another request under the same key. */
function digestOf(body: RunRequest): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}

function runsAtOnceError(key: GatewayKey, retryAfterS: number): GatewayError {
  return new GatewayError(
    429,
    "too_many_runs",
    `this key has ${key.runsAtOnce} runs unanswered already`,
    undefined,
    { "Retry-After": String(retryAfterS) },
  );
}
