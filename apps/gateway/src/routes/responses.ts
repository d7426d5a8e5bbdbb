import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { openAiErrorSchema } from "../faceSchemas.js";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json, type RouteReply } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import {
  responseCreateRequestSchema,
  responseObjectSchema,
  responseRetrieveQuerySchema,
} from "../responseSchemas.js";
import { openAiErrorBody, SESSION_HEADER } from "./chatCompletions.js";
import { startFollowedRun } from "./followFirst.js";
import { followRun, type RunEvents, streamSignal } from "./followRun.js";
import { watchParkedRun } from "./parkedRun.js";
import { ResponseFold, type ResponseRun } from "./responseFold.js";
import { runInputOf } from "./responseInput.js";
import { awaitingResponseOf, expectVisibleResponse, readResponse } from "./responseState.js";
import { streamResponse } from "./responseStream.js";
import { startRun } from "./runs.js";

/** The answers every route of the face documents besides its 200. */
const refusals = {
  400: { description: "invalid request", schema: openAiErrorSchema },
  403: {
    description: "the key lacks the scope, or may not use this agent",
    schema: openAiErrorSchema,
  },
  404: { description: "no such response for this key", schema: openAiErrorSchema },
  429: { description: "too many requests, runs or streams", schema: openAiErrorSchema },
};

/** `POST /v1/responses`: OpenAI's Responses API, a run of an agent per response. */
export const createResponseRoute = defineRoute({
  method: "POST",
  path: "/v1/responses",
  summary:
    "OpenAI's Responses API (the Open Responses face): a response is a run. model names the agent of a new session; previous_response_id continues that response's session (answered by its current agent); input is a string or items of which the last user message is read; instructions are ignored (the agent's own are its system prompt). The output holds a message per model call with text, a function_call and a function_call_output per tool call that ran on the cluster, an mcp_approval_request per call awaiting approval. Without stream: the response once the run ends (or waits for a person's decision: status incomplete, incomplete_details awaiting_approval, the calls in the yiem extension; decide them with POST /v1/approvals). With stream: the Responses server-sent events, each with a sequence_number made from the session's durable event numbers. With background: the response at once (queued or in_progress); GET /v1/responses/{id} reads it. The session is named in X-Yiem-Session. Errors in OpenAI's shape.",
  scope: "submit",
  body: responseCreateRequestSchema,
  holds: () => "long",
  errorBody: openAiErrorBody,
  responses: {
    200: {
      description: "the response (its events as server-sent events with stream: true)",
      schema: responseObjectSchema,
    },
    ...refusals,
  },
  async handle({ res, key, body, services }): Promise<RouteReply> {
    const sessionId = body.previous_response_id
      ? (await expectVisibleResponse(services, key, body.previous_response_id)).sessionId
      : randomUUID();
    const request = {
      ...(body.model ? { agent: body.model } : {}),
      input: runInputOf(body),
      sessionId,
    };
    if (body.background) {
      const run = await startRun(services, key, request, undefined, "newSession");
      res.setHeader(SESSION_HEADER, sessionId);
      return json(200, new ResponseFold(run).snapshot());
    }
    const { run, events } = await startFollowedRun(services, key, request, undefined, "newSession");
    res.setHeader(SESSION_HEADER, sessionId);
    try {
      if (!body.stream) return json(200, await awaitResponse(services, key, res, run, events));
      await streamResponse(services, key, res, run, { events });
      return { kind: "streamed" };
    } finally {
      events.close();
    }
  },
});

/**
 * The response of `run` once it ends, or once it waits for a person's decision (status
 * `incomplete`, `awaiting_approval`); a client gone or a gateway shutting down ends the wait
 * with the response as it stands (the run goes on).
 */
async function awaitResponse(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  run: ResponseRun,
  events: RunEvents,
) {
  const { signal, release } = streamSignal(services, res, key);
  const watch = watchParkedRun(services, run, run.afterSeq);
  const fold = new ResponseFold(run);
  try {
    const until = AbortSignal.any([signal, watch.signal]);
    const followed = followRun(services, run, run.afterSeq, until, watch.saw, events);
    for await (const event of followed) fold.add(event);
    if (!fold.ended && watch.signal.aborted && !signal.aborted) {
      fold.markAwaiting(awaitingResponseOf(run, watch.pending));
    }
    return fold.snapshot();
  } finally {
    watch.stop();
    release();
  }
}

/** `GET /v1/responses/{id}`: a response as it stands, or its events (resumable). */
export const retrieveResponseRoute = defineRoute({
  method: "GET",
  path: "/v1/responses/{id}",
  summary:
    "A response as it stands, rebuilt from its run's durable events (any gateway answers it, a day after it was made): queued, in_progress, completed, failed, cancelled, or incomplete (awaiting_approval while a call waits for a decision). With ?stream=true: its events as server-sent events from the start, or after ?starting_after= (a sequence_number), then live until the run ends or waits for a decision.",
  scope: "read",
  query: responseRetrieveQuerySchema,
  holds: (query) => (query.stream === "true" ? "stream" : undefined),
  errorBody: openAiErrorBody,
  responses: {
    200: { description: "the response (or its event stream)", schema: responseObjectSchema },
    ...refusals,
  },
  async handle({ res, key, params, query, services }): Promise<RouteReply> {
    const run = await expectVisibleResponse(services, key, params.id ?? "");
    if (query.stream === "true") {
      await streamResponse(services, key, res, run, {
        resume: { startingAfter: query.starting_after ?? -1 },
      });
      return { kind: "streamed" };
    }
    return json(200, await readResponse(services, run));
  },
});

/** How long a cancel waits for the run to end before answering with the response as it stands. */
const CANCEL_WAIT_MS = 10_000;

/** `POST /v1/responses/{id}/cancel`: aborts the response's run, durably. */
export const cancelResponseRoute = defineRoute({
  method: "POST",
  path: "/v1/responses/{id}/cancel",
  summary:
    "Cancels a response: the durable abort of its run (as POST /v1/sessions/{id}/abort: recorded, so a parked run is stopped too, and its running calls are cancelled on the workers). A run just queued is cancelled once a coordinator takes it up. Answers the response once its run ended (status cancelled), or as it stands after 10 s. A response that ended is answered as it is; one that is not its session's open run within 10 s (another run took its input in, or it waits behind one) is a 409.",
  scope: "submit",
  errorBody: openAiErrorBody,
  responses: {
    200: { description: "the response", schema: responseObjectSchema },
    409: {
      description: "the response's run is not its session's open run",
      schema: openAiErrorSchema,
    },
    ...refusals,
  },
  async handle({ key, params, services }) {
    const run = await expectVisibleResponse(services, key, params.id ?? "");
    const now = await readResponse(services, run);
    if (isSettled(now)) return json(200, now);
    if (!(await awaitOpen(services, run))) {
      throw new GatewayError(
        409,
        "not_started",
        `response ${now.id} is not its session's open run: another run took its input in, or it waits behind one (cancel that run's response)`,
      );
    }
    await services.client.abort(run.sessionId);
    return json(200, await awaitEnd(services, run));
  },
});

/**
 * Whether `run` is its session's open run, waiting `CANCEL_WAIT_MS` at most for a run just
 * queued to be taken up (an abort stops only the open run: one recorded earlier would be lost).
 */
async function awaitOpen(services: GatewayServices, run: ResponseRun): Promise<boolean> {
  const until = Date.now() + CANCEL_WAIT_MS;
  while ((await services.store.openRunOf(run.sessionId)) !== run.runId) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** The response once its run ended, or as it stands after `CANCEL_WAIT_MS`. */
async function awaitEnd(services: GatewayServices, run: ResponseRun) {
  const until = Date.now() + CANCEL_WAIT_MS;
  let now = await readResponse(services, run);
  while (!isSettled(now) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    now = await readResponse(services, run);
  }
  return now;
}

/** Whether a response's run has ended (a run awaiting a decision has not). */
function isSettled(response: { status: string; incomplete_details: { reason: string } | null }) {
  if (response.status === "incomplete") {
    return response.incomplete_details?.reason !== "awaiting_approval";
  }
  return !["queued", "in_progress"].includes(response.status);
}

/** The routes of the Open Responses face. */
export const responseRoutes = [createResponseRoute, retrieveResponseRoute, cancelResponseRoute];
