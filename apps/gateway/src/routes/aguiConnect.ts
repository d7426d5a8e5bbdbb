import { aguiConnectInputSchema } from "../faceSchemas.js";
import { notFound } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, type RouteReply } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { errorSchema } from "../schemas.js";
import { aguiRunKey, type FollowedRun, streamAguiRun } from "./agui.js";
import { expectVisibleSession } from "./sessionAccess.js";

/**
 * `POST /v1/agui/connect`: an AG-UI client's `connect` (`connectAgent`): re-attaches to a
 * thread's run without starting one, on any gateway. The run is the one the client's `runId`
 * started on the thread (the key's AG-UI run of that id), else the thread's latest run; its
 * AG-UI events are rebuilt from the session's stored events from the run's start and followed
 * live until it ends (`RUN_FINISHED`, `RUN_ERROR`) or waits for a decision (`RUN_FINISHED`
 * with its interrupts, which the next `runAgent`'s `resume` answers). Nothing is kept in a
 * gateway: the run's record and events are in Redis (a day).
 */
export const aguiConnectRoute = defineRoute({
  method: "POST",
  path: "/v1/agui/connect",
  summary:
    "The AG-UI face's connect (connectAgent of an AG-UI client): takes a RunAgentInput naming a thread (the session) and re-attaches to its run, starting none: the run that the same threadId and runId started through POST /v1/agui (this key's), else the thread's latest run. Answers that run's AG-UI events from its start, rebuilt from the stored events on any gateway, then live until RUN_FINISHED (success, cancelled, or interrupt while it waits for approval) or RUN_ERROR. Closing the stream leaves the run going. X-Yiem-Session and X-Yiem-Run name the session and run.",
  scope: "read",
  body: aguiConnectInputSchema,
  holds: () => "long",
  responses: {
    200: { description: "the run's AG-UI events", mediaType: "text/event-stream" },
    400: { description: "invalid request", schema: errorSchema },
    404: { description: "the thread is not the key's, or has had no run", schema: errorSchema },
  },
  async handle({ res, key, body, services }): Promise<RouteReply> {
    await expectVisibleSession(services, key, body.threadId);
    const run = await locateThreadRun(services, key, body.threadId, body.runId);
    await streamAguiRun(services, key, res, run, { threadId: body.threadId, runId: body.runId });
    return { kind: "streamed" };
  },
});

/**
 * The run a connect follows: the one `key`'s AG-UI run `runId` started on `threadId`, else the
 * thread's latest run (its open run, else the run of its latest stored events that a gateway
 * recorded), from the event it started after; 404 when the thread has had no run (or its
 * record is gone, after a day).
 */
async function locateThreadRun(
  services: GatewayServices,
  key: GatewayKey,
  threadId: string,
  runId: string,
): Promise<FollowedRun> {
  const started = await services.store.readIdempotencyKey(key.name, aguiRunKey(threadId, runId));
  const candidates =
    started?.sessionId === threadId
      ? [started.runId]
      : [
          ...[await services.store.openRunOf(threadId)].filter((id) => id !== undefined),
          ...(await services.store.latestRunIds(threadId)),
        ];
  for (const id of candidates) {
    const record = await services.store.readRun(id);
    if (record?.sessionId === threadId) {
      return { runId: id, sessionId: threadId, afterSeq: record.afterSeq ?? 0 };
    }
  }
  throw notFound("run of thread", threadId);
}
