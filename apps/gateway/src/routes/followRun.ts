import type { BusEvent } from "@yiem/core";
import { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { type PlannedRun, pollRefusal } from "./runs.js";

/** The events of a child run's calls that a chat face is given (it tells them by their `path`). */
const CHILD_CALL_EVENTS: ReadonlySet<string> = new Set([
  "toolApprovalRequested",
  "toolExecStart",
  "toolExecUpdate",
  "toolExecEnd",
]);

/** A run's session events as `followRun` reads them, and what ends them. */
export interface RunEvents {
  /** The events after the stored event they start after, until the run's `agentEnd`. */
  stream: AsyncGenerator<BusEvent>;
  /** Ends the stream (a read waiting too); idempotent. */
  close(): void;
}

/**
 * The events of `run`'s session after `afterSeq` until the `agentEnd` that answers it. The
 * stream opens at its first read; `onLive` is told once it is live (subscribed and its start
 * read: `followFirst.ts` queues the run only then).
 */
export function runEventsOf(
  services: GatewayServices,
  run: PlannedRun,
  afterSeq: number,
  onLive?: () => void,
): RunEvents {
  const stop = new AbortController();
  const stream = services.client.events(run.sessionId, {
    afterSeq,
    untilAgentEnd: true,
    runId: run.runId,
    signal: stop.signal,
    ...(onLive ? { onLive } : {}),
  });
  return { stream, close: () => stop.abort() };
}

/**
 * The session's events after `afterSeq` (read before the run was queued, so none is missed)
 * until the `agentEnd` that answers `run`, for the chat faces: the root's own events, and of a
 * child run's (which carry `path`) only its calls' (`CHILD_CALL_EVENTS`: a call awaiting
 * approval in a child run is the client's to decide; a child's text is not the answer, and its
 * result reaches the root as its `agent__<name>` call's result). `saw` is told the number of
 * every event read, shown or not. Read from `opened` when given (a run the face just started,
 * followed since before it was queued: `startFollowedRun`, whose first model call then streams
 * as deltas), else from a stream opened now (a model call streaming already when it joins
 * comes whole with its `messageEnd`). Throws `GatewayError` 400 `run_refused` when the
 * coordinators refuse the run's request before it starts. Ends early on `signal` (the client
 * went away, the gateway shuts down, the run parked for approval); the run goes on.
 */
export async function* followRun(
  services: GatewayServices,
  run: PlannedRun,
  afterSeq: number,
  signal: AbortSignal,
  saw?: (seq: number) => void,
  opened?: RunEvents,
): AsyncGenerator<BusEvent> {
  const events = opened ?? runEventsOf(services, run, afterSeq);
  // Its own stop too: a pending `next` must end before the generator can be returned.
  const end = () => events.close();
  if (signal.aborted) end();
  else signal.addEventListener("abort", end, { once: true });
  const refusal = pollRefusal(services, run.runId);
  let started = false;
  try {
    while (true) {
      const next = started
        ? await events.stream.next()
        : await Promise.race([events.stream.next(), refusal.outcome]);
      if ("kind" in next) {
        if (next.kind === "refused") throw new GatewayError(400, "run_refused", next.reason);
        continue;
      }
      if (next.done) return;
      if (!started) refusal.stop();
      started = true;
      saw?.(next.value.seq);
      if (!next.value.path || CHILD_CALL_EVENTS.has(next.value.type)) yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", end);
    refusal.stop();
    events.close();
    await events.stream.return(undefined);
  }
}

/** A signal for one answer stream, and what detaches it from the gateway's shutdown. */
export interface StreamSignal {
  signal: AbortSignal;
  release(): void;
}

/**
 * An abort signal that fires when `res` closes, the gateway shuts down, or `key` is revoked
 * (taken out of the keys file); `release` detaches it.
 */
export function streamSignal(
  services: GatewayServices,
  res: { once(event: "close", listener: () => void): unknown },
  key: GatewayKey,
): StreamSignal {
  const stop = new AbortController();
  const end = () => stop.abort();
  res.once("close", end);
  const ends = [services.closing, services.revocation(key)];
  for (const signal of ends) {
    if (signal.aborted) stop.abort();
    signal.addEventListener("abort", end, { once: true });
  }
  return {
    signal: stop.signal,
    release: () => {
      for (const signal of ends) signal.removeEventListener("abort", end);
    },
  };
}
