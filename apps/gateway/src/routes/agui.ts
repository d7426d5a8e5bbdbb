import type { ServerResponse } from "node:http";
import type { z } from "zod";
import { aguiRunInputSchema } from "../faceSchemas.js";
import { openEventStream } from "../http/eventStream.js";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, type RouteReply } from "../http/route.js";
import { type GatewayKey, hasScope } from "../keys/gatewayKey.js";
import { errorSchema } from "../schemas.js";
import { type AguiEvent, AguiEvents, type AguiRunIds } from "./aguiEvents.js";
import { openLiveEvents, startFollowedRun } from "./followFirst.js";
import { followRun, type RunEvents, streamSignal } from "./followRun.js";
import { watchParkedRun } from "./parkedRun.js";
import type { PlannedRun } from "./runs.js";
import { expectVisibleSession } from "./sessionAccess.js";
import { decideCall, locateWaitingCall } from "./waitingCalls.js";

type AguiRunInput = z.infer<typeof aguiRunInputSchema>;
type ResumeEntry = NonNullable<AguiRunInput["resume"]>[number];

/** A run an AG-UI request follows: its ids and the session's event it starts after. */
export interface FollowedRun extends PlannedRun {
  afterSeq: number;
}

/** `POST /v1/agui`: the AG-UI face (`HttpAgent` of `@ag-ui/client`, CopilotKit). */
export const aguiRunRoute = defineRoute({
  method: "POST",
  path: "/v1/agui",
  summary:
    "The AG-UI face (the Agent–User Interaction protocol, HttpAgent of @ag-ui/client): takes a RunAgentInput (threadId is the session; the last user message is the run's input; forwardedProps.agent picks the agent of a new thread) and answers with the run's AG-UI events over SSE: RUN_STARTED, text messages, tool calls with their results (they run on the cluster), a STATE_SNAPSHOT of the run's usage, RUN_FINISHED (outcome success with the answer's text as result, cancelled after an abort) or RUN_ERROR. A run that waits for approval ends with RUN_FINISHED outcome interrupt, one interrupt per call awaiting a decision (a child run's included); the next run's resume entries decide them ({ approved, reason? } as payload, or status cancelled to deny; approve scope) and stream the resumed run. Sending the same threadId and runId again follows that run from its start, on any gateway (a reconnect). Closing the stream leaves the run going; POST /v1/sessions/{threadId}/abort cancels it. X-Yiem-Session and X-Yiem-Run name the session and run.",
  scope: "submit",
  body: aguiRunInputSchema,
  holds: () => "long",
  responses: {
    200: { description: "the run's AG-UI events", mediaType: "text/event-stream" },
    400: { description: "invalid request", schema: errorSchema },
    403: { description: "the key may not use this agent or decide calls", schema: errorSchema },
    404: { description: "the thread is not the key's", schema: errorSchema },
    409: { description: "an interrupt answered no longer waits", schema: errorSchema },
    429: {
      description: "too many requests, runs or requests waiting at once",
      schema: errorSchema,
    },
  },
  async handle({ res, key, body, services }): Promise<RouteReply> {
    const ids = { threadId: body.threadId, runId: body.runId };
    const { run, events } =
      body.resume && body.resume.length > 0
        ? await resumeRun(services, key, body.threadId, body.resume)
        : await startAguiRun(services, key, body);
    try {
      await streamAguiRun(services, key, res, run, ids, events);
    } finally {
      events.close();
    }
    return { kind: "streamed" };
  },
});

/**
 * Starts the run of `body` (its last user message's text), or finds the one the same thread
 * and run id started before: the client's run id is the run's idempotency key, so a reconnect
 * follows the run from its start and never runs it twice. Its events are followed since
 * before it was queued (`startFollowedRun`).
 */
async function startAguiRun(
  services: GatewayServices,
  key: GatewayKey,
  body: AguiRunInput,
): Promise<{ run: FollowedRun; events: RunEvents }> {
  const text = lastUserText(body.messages);
  const agent = body.forwardedProps?.agent;
  const { run, events } = await startFollowedRun(
    services,
    key,
    { input: text, sessionId: body.threadId, ...(agent !== undefined ? { agent } : {}) },
    aguiRunKey(body.threadId, body.runId),
    "newSession",
  );
  return { run: { runId: run.runId, sessionId: run.sessionId, afterSeq: run.afterSeq }, events };
}

/** The idempotency key of the AG-UI run `runId` of thread `threadId` (the client's ids). */
export function aguiRunKey(threadId: string, runId: string): string {
  return `agui:${threadId}:${runId}`;
}

/** The text of the last message when it is the user's: the run's input. */
function lastUserText(messages: AguiRunInput["messages"]): string {
  const last = messages.at(-1);
  const content = last?.role === "user" ? last.content : undefined;
  const text =
    typeof content === "string"
      ? content
      : (content ?? [])
          .map((part) => (part.type === "text" ? String(part.text ?? "") : ""))
          .join("");
  if (text.trim() === "") {
    throw new GatewayError(
      400,
      "invalid_request",
      "messages: the last message must be a user message with text (or resume must answer the open interrupts)",
      "messages",
    );
  }
  return text;
}

/**
 * Decides the calls that `resume` answers (where each waits, a child run's included; the
 * key's name as who decided) and returns the parked run they resume with its events, followed
 * since before the first decision was sent (`openLiveEvents`: the resumed run's text then
 * streams as its deltas). 403 without the approve scope, 409 when none of them waits.
 */
async function resumeRun(
  services: GatewayServices,
  key: GatewayKey,
  threadId: string,
  resume: ResumeEntry[],
): Promise<{ run: FollowedRun; events: RunEvents }> {
  if (!hasScope(key, "approve")) {
    throw new GatewayError(403, "forbidden", 'this key lacks the "approve" scope');
  }
  await expectVisibleSession(services, key, threadId);
  const afterSeq = await services.store.latestEventSeq(threadId);
  let resumed: { run: FollowedRun; events: RunEvents } | undefined;
  try {
    for (const entry of resume) {
      const call = await locateWaitingCall(services, threadId, entry.interruptId, "resume");
      if (!call) continue;
      const decision = { callId: entry.interruptId, ...decisionOf(entry) };
      // Read before deciding: the resumed run may end, and its record go, before the decision returns.
      const runId =
        resumed?.run.runId ??
        (call.sessionId === threadId ? call.runId : await services.store.openRunOf(threadId));
      if (!resumed && runId !== undefined) {
        const run = { runId, sessionId: threadId, afterSeq };
        resumed = { run, events: await openLiveEvents(services, run, afterSeq) };
      }
      await decideCall(services, call, decision, key.name, "resume");
    }
  } catch (err) {
    resumed?.events.close();
    throw err;
  }
  if (!resumed) {
    throw new GatewayError(409, "not_waiting", "no interrupt of resume waits", "resume");
  }
  return resumed;
}

/** The decision a resume entry stands for: `cancelled` denies; `resolved` says by its payload. */
function decisionOf(entry: ResumeEntry): { approved: boolean; reason?: string } {
  if (entry.status === "cancelled") return { approved: false, reason: "cancelled by the user" };
  if (entry.payload === undefined) {
    throw new GatewayError(
      400,
      "invalid_request",
      `resume: interrupt ${entry.interruptId} is resolved without a payload { approved }`,
      "resume",
    );
  }
  const { approved, reason } = entry.payload;
  return { approved, ...(reason ? { reason } : {}) };
}

/** The SSE text of one AG-UI event. */
function formatAguiEvent(event: AguiEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

/**
 * Streams `run` (from its `afterSeq`) as one AG-UI run (`AguiEvents`) until its `agentEnd`, or until it waits for
 * approval (the run then finishes with interrupts), or the client leaves or stops reading
 * (the run goes on), the gateway shuts down or the key is revoked. `events`: the run's, followed
 * since before it was queued (`startFollowedRun`) or resumed (`openLiveEvents`).
 */
export async function streamAguiRun(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  run: FollowedRun,
  ids: AguiRunIds,
  events?: RunEvents,
): Promise<void> {
  const { signal, release } = streamSignal(services, res, key);
  const stalled = new AbortController();
  res.setHeader("X-Yiem-Session", run.sessionId);
  res.setHeader("X-Yiem-Run", run.runId);
  const stopHeartbeat = openEventStream(res, services.heartbeatMs, () => stalled.abort());
  const gone = AbortSignal.any([signal, stalled.signal]);
  const agui = new AguiEvents(ids);
  const send = (list: AguiEvent[]) => {
    if (!gone.aborted) for (const event of list) res.write(formatAguiEvent(event));
  };
  const watch = watchParkedRun(services, run, run.afterSeq);
  try {
    send(agui.started());
    const until = AbortSignal.any([gone, watch.signal]);
    for await (const event of followRun(services, run, run.afterSeq, until, watch.saw, events)) {
      send(agui.eventsOf(event));
    }
    if (!agui.ended && watch.signal.aborted && !gone.aborted) send(agui.parked(watch.pending));
  } catch (err) {
    if (err instanceof GatewayError) send(agui.failed(err.code, err.message));
    else {
      services.log.warn(
        { sessionId: run.sessionId, err: (err as Error).message },
        "AG-UI stream failed",
      );
      send(agui.failed("internal", "internal error"));
    }
  } finally {
    watch.stop();
    stopHeartbeat();
    release();
    res.end();
  }
}
