import type { PendingApproval } from "@yiem/core";
import type { GatewayServices } from "../http/route.js";
import type { PlannedRun } from "./runs.js";

/** How often a face looks whether its run waits for approval. */
const PARK_CHECK_MS = 300;

/** How long a face that found its run parked waits for the events stored before it parked. */
const DRAIN_MS = 2000;

/** A face's watch of its run: whether it waits for a person's decision. */
export interface ParkWatch {
  /** Fires once the run waits for approval; `pending` then lists the calls it waits for. */
  signal: AbortSignal;
  /** The calls awaiting a decision in the run's tree, oldest first (set when `signal` fires). */
  pending: PendingApproval[];
  /** Tells the watch the number of an event the face read (any event of the session). */
  saw(seq: number): void;
  /** Stops looking. */
  stop(): void;
}

/**
 * Looks every `PARK_CHECK_MS` whether `run` waits for approval: its session's run is parked
 * (its own, or the one it is queued behind), a call awaits a decision somewhere in its tree
 * (the session's, or a child run's), and every session with such a call is parked (its batch
 * has recorded all its requests). It then waits, `DRAIN_MS` at most, until the face has read
 * the events stored before (`saw`), and fires `signal`, so a face ends its answer there and
 * says so in its protocol instead of holding the request open while nobody decides. A run
 * parked only for its child runs is not waiting for approval. Never decides anything.
 */
export function watchParkedRun(
  services: GatewayServices,
  run: PlannedRun,
  afterSeq: number,
): ParkWatch {
  const parked = new AbortController();
  let seen = afterSeq;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const watch: ParkWatch = {
    signal: parked.signal,
    pending: [],
    saw: (seq) => {
      seen = Math.max(seen, seq);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
  const later = () => {
    if (!stopped) timer = setTimeout(look, PARK_CHECK_MS);
  };
  const look = async () => {
    const pending = await awaitedCalls(services, run.sessionId).catch(() => []);
    if (pending.length === 0 || stopped) return later();
    const stored = await services.store.latestEventSeq(run.sessionId).catch(() => 0);
    for (const until = Date.now() + DRAIN_MS; seen < stored && Date.now() < until && !stopped; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (stopped) return;
    watch.pending = pending;
    parked.abort();
  };
  timer = setTimeout(look, PARK_CHECK_MS);
  return watch;
}

/**
 * The calls `sessionId`'s parked run waits for a decision on, in its tree; none while the
 * session is not parked, or while a session with such a call is still running its batch.
 */
export async function awaitedCalls(
  services: GatewayServices,
  sessionId: string,
): Promise<PendingApproval[]> {
  if (!(await services.store.isParked(sessionId))) return [];
  const pending = await services.client.pendingApprovals(sessionId);
  const others = [...new Set(pending.map((p) => p.sessionId))].filter((id) => id !== sessionId);
  const parked = await Promise.all(others.map((id) => services.store.isParked(id)));
  return parked.every(Boolean) ? pending : [];
}
