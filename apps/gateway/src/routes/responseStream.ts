import type { ServerResponse } from "node:http";
import { openEventStream } from "../http/eventStream.js";
import { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { followRun, type RunEvents, streamSignal } from "./followRun.js";
import { watchParkedRun } from "./parkedRun.js";
import { ResponseFold, type ResponseRun, type ResponseStreamEvent } from "./responseFold.js";
import { awaitingResponseOf } from "./responseState.js";

/** The SSE text of one Responses stream event: `event:` its type, `data:` its JSON. */
function formatResponseEvent(event: ResponseStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** How `streamResponse` reads a run's events. */
export interface ResponseStreamOptions {
  /** Resume after the stream event numbered `startingAfter` (a retrieve's stream). */
  resume?: { startingAfter: number };
  /** The run's events, followed since before it was queued (`startFollowedRun`). */
  events?: RunEvents;
}

/**
 * Streams the response of `run` as the Responses API's server-sent events, rebuilt from the
 * run's events from its start (`ResponseFold`), so any gateway streams it alike and a client
 * resumes with `resume.startingAfter` (the last `sequence_number` it took; without `resume`,
 * the stream of a run just queued, best read from `events`, whose first model call then
 * streams as deltas): `response.created`,
 * `response.in_progress`, each output item (`response.output_item.added`, the text as
 * `response.output_text.delta`, `…done`), then `response.completed` (or `response.failed`;
 * `response.incomplete` for a cancelled or cut run). A run that waits for a person's decision
 * ends the stream with `response.incomplete` (`awaiting_approval`, the calls in the `yiem`
 * extension); the client resumes after it once the calls are decided. Ends early when the
 * client goes away (the run goes on), the gateway shuts down or the key is revoked.
 */
export async function streamResponse(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  run: ResponseRun,
  options: ResponseStreamOptions = {},
): Promise<void> {
  const { resume } = options;
  // Read before following a resumed stream: a model call streaming already is sent whole at
  // its end (a run just started is followed from before it was queued: none is yet).
  const liveAfter = resume
    ? Math.max(run.afterSeq, await services.store.latestEventSeq(run.sessionId))
    : run.afterSeq;
  const { signal, release } = streamSignal(services, res, key);
  const stopHeartbeat = openEventStream(res, services.heartbeatMs);
  const fold = new ResponseFold(run, {
    startingAfter: resume?.startingAfter ?? -1,
    liveAfter,
    emit: (event) => {
      if (!signal.aborted) res.write(formatResponseEvent(event));
    },
  });
  const watch = watchParkedRun(services, run, run.afterSeq);
  try {
    fold.begin();
    const until = AbortSignal.any([signal, watch.signal]);
    const followed = followRun(services, run, run.afterSeq, until, watch.saw, options.events);
    for await (const event of followed) fold.add(event);
    if (!signal.aborted && !fold.ended && watch.signal.aborted) {
      fold.park(awaitingResponseOf(run, watch.pending));
    }
  } catch (err) {
    if (err instanceof GatewayError) fold.fail(err.code, err.message);
    else {
      services.log.warn(
        { sessionId: run.sessionId, err: (err as Error).message },
        "response stream failed",
      );
      fold.fail("internal", "internal error");
    }
  } finally {
    watch.stop();
    stopHeartbeat();
    release();
    res.end();
  }
}
