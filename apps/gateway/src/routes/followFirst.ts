import { whenEventsLive } from "@yiem/core";
import { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { type RunEvents, runEventsOf } from "./followRun.js";
import type { AgentField } from "./runAgent.js";
import { type PlannedRun, type RunRequest, type StartedRun, startRun } from "./runs.js";

/** How long a run's events may take to be live (Redis away) before its start (or resume) is given up. */
const LIVE_WAIT_MS = 10_000;

/** A run `startFollowedRun` started, and its events, followed since before it was queued. */
export interface FollowedStart {
  run: StartedRun;
  /**
   * The run's events for `followRun` (its `opened`); `close` them when the face does not read
   * them (closing them again is harmless).
   */
  events: RunEvents;
}

/**
 * Starts a run as `startRun` does (the same arguments), following it first: the run's session
 * events after where it starts are subscribed, Redis having acknowledged it, before its request
 * is queued, and what comes before the face reads them waits for it (within the stream's queue
 * bounds). So however quick the coordinator, a face streams the first model call's text as its
 * deltas, where a follow opened after the start would miss those published before it joined
 * (and send that text whole with its `messageEnd`); stored events still come once each, in
 * order. Every face that streams a run it starts uses it. A 503 when the events are not live
 * within `LIVE_WAIT_MS` (nothing queued then).
 */
export async function startFollowedRun(
  services: GatewayServices,
  key: GatewayKey,
  body: RunRequest,
  idempotencyKey?: string,
  field?: AgentField,
): Promise<FollowedStart> {
  let events: RunEvents | undefined;
  const follow = async (run: StartedRun) => {
    events = await openLiveEvents(services, run, run.afterSeq);
  };
  try {
    const run = await startRun(services, key, body, idempotencyKey, field, follow);
    return { run, events: events as RunEvents };
  } catch (err) {
    events?.close();
    throw err;
  }
}

/**
 * The events of `run`'s session after `afterSeq` until the run's `agentEnd` (`runEventsOf`),
 * returned once they are live: subscribed, Redis having acknowledged it (`onLive`). A face
 * opens them before it does what makes the run go on (queues it: `startFollowedRun`; sends
 * the decision that resumes it: the chat and AG-UI faces' approval answers), so the model's
 * text deltas that follow come as deltas however quick the coordinator. `close` them when the
 * face does not read them. A 503 when they are not live within `LIVE_WAIT_MS`.
 */
export async function openLiveEvents(
  services: GatewayServices,
  run: PlannedRun,
  afterSeq: number,
): Promise<RunEvents> {
  const opened = await whenEventsLive(
    (onLive) => runEventsOf(services, run, afterSeq, onLive),
    LIVE_WAIT_MS,
  );
  if (!opened) throw unavailable();
  return opened;
}

/** The 503 of a run whose events were not live in time (nothing was queued or decided). */
function unavailable(): GatewayError {
  const retry = { "Retry-After": "1" };
  const message = "the cluster is unavailable; retry later";
  return new GatewayError(503, "unavailable", message, undefined, retry);
}
