import type { AgentPathLink } from "../features/childRuns/protocol.js";
import { type BusEvent, busEventJson, type EventOrigin } from "../protocol/busEvent.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { withScripts } from "../redis/scripts.js";
import type { AgentEvent } from "../types/index.js";
import { type EventKind, eventBatchesOf, type TakenEvents } from "./eventBatches.js";
import { type StreamCaps, streamCaps } from "./streamCaps.js";
import { entriesAfter, eventTextsOf } from "./streamEntries.js";

export {
  DEFAULT_STREAM_LENGTH,
  type StreamCaps,
  streamCaps,
} from "./streamCaps.js";

/**
 * Publishes an event: numbered, appended to the session's capped replay stream and sent
 * live on `<prefix>:events:<sessionId>`, atomically, as `busEventJson` encodes it (large
 * tool-call arguments cut to a preview). Returns its sequence number.
 * Throws only when Redis fails.
 */
export async function publishEvent(
  redis: RedisClient,
  keys: ClusterKeys,
  origin: EventOrigin,
  event: AgentEvent,
  caps: StreamCaps = streamCaps(),
  /** The session whose stream gets the event: its own, or its tree's root (`BusEvent.path`). */
  sessionId: string = origin.sessionId,
): Promise<number> {
  return withScripts(redis).yiemPublishEvent(
    keys.stream(sessionId),
    keys.eventChannel(sessionId),
    busEventJson(event, origin),
    caps.maxLength,
    caps.maxBytes,
  );
}

/** Parses one bus message; returns nothing for anything that is not a bus event. */
export function parseBusEvent(text: string): BusEvent | undefined {
  try {
    const value = JSON.parse(text) as BusEvent;
    return typeof value.seq === "number" && typeof value.type === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Every stored event of a session with a sequence number above `afterSeq`, in order. */
export async function readEventsAfter(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionId: string,
  afterSeq: number,
): Promise<BusEvent[]> {
  const entries = await redis.xrange(keys.stream(sessionId), entriesAfter(afterSeq), "+");
  const events: BusEvent[] = [];
  for (const [, fields] of entries) {
    for (const text of eventTextsOf(fields)) {
      const event = parseBusEvent(text);
      if (event && event.seq > afterSeq) events.push(event);
    }
  }
  return events;
}

/**
 * The sequence number of the session's latest event (0 when it has none): the id of its
 * replay stream's newest entry (`<seq>-1`, the number of its last event; the newest entry is
 * never trimmed).
 */
export async function latestSeq(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionId: string,
): Promise<number> {
  const [newest] = await redis.xrevrange(keys.stream(sessionId), "+", "-", "COUNT", 1);
  return seqOfEntryId(newest?.[0]);
}

/** The event number of a replay stream entry id (`<seq>-1`); 0 for none. */
function seqOfEntryId(id: string | undefined): number {
  return id ? Number.parseInt(id, 10) : 0;
}

/** Where a child run's events are seen too: its root session, with the way down to the child. */
export interface EventTree {
  rootSessionId: string;
  path: AgentPathLink[];
}

/** Publishes a run's events without waiting for each reply, and waits for all of them on `flush`. */
export interface EventPublisher {
  /** Sends the event to Redis and returns at once. Never throws; a failed publish is dropped. */
  emit(event: AgentEvent, extra?: Partial<EventOrigin>): Promise<void>;
  /**
   * The same for a live-only event (`messageUpdate`): not stored, not numbered, published with
   * `live: true` and the number of the session's latest stored event, in order with the others.
   */
  emitLive(event: AgentEvent): Promise<void>;
  /** Resolves once every event sent so far has been published (or has failed). */
  flush(): Promise<void>;
  /**
   * Takes the events of the run's session still queued (`EventBatches.take`), for the script
   * that closes the run to store first: they are not sent otherwise. `undefined` when none is.
   */
  takeQueued(): TakenEvents | undefined;
  /**
   * `event` as the script that closes the run takes an event to store only if the run closes
   * (`finishRun.lua`: kind `S`, or `L` for a live one, then its JSON); nothing is sent.
   */
  onlyIfClosed(event: AgentEvent): string[];
}

/**
 * A publisher for one origin (session and run). Events go out on one connection, so Redis
 * applies them in the order they were sent, before any command sent after them on the same
 * connection (a job added for a call is always behind the call's start event); waiting for
 * each reply would only add a round trip per event to the run. Events sent one after another
 * go out together, one script per session (`eventBatchesOf`).
 */
export function createEventPublisher(
  redis: RedisClient,
  keys: ClusterKeys,
  origin: EventOrigin,
  caps: StreamCaps = streamCaps(),
  /**
   * A child run's tree: each event goes to its root session too, with `path` (a stored one to
   * the root's stream, a live one to the root's channel).
   */
  tree?: EventTree,
): EventPublisher {
  const batches = eventBatchesOf(redis, keys);
  const pending = new Set<Promise<unknown>>();
  const track = (sent: Promise<unknown>) => {
    const settled = sent.catch(() => undefined); // a failed publish is dropped
    pending.add(settled);
    void settled.finally(() => pending.delete(settled));
    return Promise.resolve();
  };
  // The same origin objects event after event: `busEventJson` keeps each one's JSON tail.
  const own = { ...origin };
  const seenFromRoot = tree ? { ...origin, path: tree.path } : undefined;
  const send = (kind: EventKind, event: AgentEvent, extra: Partial<EventOrigin>) => {
    const plain = Object.keys(extra).length === 0;
    if (tree && seenFromRoot) {
      const seen = plain ? seenFromRoot : { ...origin, ...extra, path: tree.path };
      void track(batches.add(tree.rootSessionId, kind, busEventJson(event, seen), caps));
    }
    const from = plain ? own : { ...origin, ...extra };
    return track(batches.add(origin.sessionId, kind, busEventJson(event, from), caps));
  };
  return {
    emit: (event, extra = {}) => send("stored", event, extra),
    emitLive: (event) => send("live", event, {}),
    async flush() {
      batches.send();
      await Promise.all(pending);
    },
    takeQueued: () => batches.take(origin.sessionId),
    onlyIfClosed: (event) => [event.type === "messageUpdate" ? "L" : "S", busEventJson(event, own)],
  };
}
