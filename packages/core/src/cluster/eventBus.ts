import type { Redis } from "ioredis";
import type { AgentEvent } from "../types/index.js";
import type { BusEvent, EventOrigin } from "./busEvent.js";
import type { ClusterKeys } from "./keys.js";

/** How many events a session's replay stream keeps (approximately). */
export const DEFAULT_STREAM_LENGTH = 10_000;

// Numbering, appending and publishing happen in one script, so the live order, the replay
// order and the sequence numbers always agree. The stream entry id is `<seq>-1`, which makes
// "every event after seq N" one XRANGE. `seq` is spliced into the JSON text so nothing in
// Lua re-encodes the payload.
const PUBLISH_EVENT = `
local seq = redis.call('INCR', KEYS[1])
local msg = '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-1', 'e', msg)
redis.call('PUBLISH', ARGV[1], msg)
return seq
`;

// A live event is published only; it carries the number of the latest stored event, read in
// the same script, so a reader can tell whether it is in step with the stored events.
const PUBLISH_LIVE_EVENT = `
local seq = tonumber(redis.call('GET', KEYS[1]) or '0')
local msg = '{"seq":' .. seq .. ',"live":true,' .. string.sub(ARGV[2], 2)
redis.call('PUBLISH', ARGV[1], msg)
return seq
`;

type PublishingRedis = Redis & {
  yiemPublishEvent(
    seqKey: string,
    streamKey: string,
    channel: string,
    payload: string,
    maxLen: number,
  ): Promise<number>;
  yiemPublishLiveEvent(seqKey: string, channel: string, payload: string): Promise<number>;
};

function withPublishScript(redis: Redis): PublishingRedis {
  const scripted = redis as PublishingRedis;
  if (typeof scripted.yiemPublishEvent !== "function") {
    redis.defineCommand("yiemPublishEvent", { numberOfKeys: 2, lua: PUBLISH_EVENT });
  }
  if (typeof scripted.yiemPublishLiveEvent !== "function") {
    redis.defineCommand("yiemPublishLiveEvent", { numberOfKeys: 1, lua: PUBLISH_LIVE_EVENT });
  }
  return scripted;
}

/**
 * Publishes an event: numbered, appended to the session's capped replay stream and sent
 * live on `<prefix>:events:<sessionId>`, atomically. Returns its sequence number.
 * Throws only when Redis fails.
 */
export async function publishEvent(
  redis: Redis,
  keys: ClusterKeys,
  origin: EventOrigin,
  event: AgentEvent,
  maxLen = DEFAULT_STREAM_LENGTH,
): Promise<number> {
  const payload = JSON.stringify({ ...event, ...origin, ts: Date.now() });
  const { sessionId } = origin;
  return withPublishScript(redis).yiemPublishEvent(
    keys.seq(sessionId),
    keys.stream(sessionId),
    keys.eventChannel(sessionId),
    payload,
    maxLen,
  );
}

/**
 * Publishes a live-only event (`messageUpdate`) on `<prefix>:events:<sessionId>`: not stored,
 * not numbered. It goes out with `live: true` and the sequence number of the session's latest
 * stored event, so `streamSessionEvents` passes it on only in its place. Returns that number.
 * Throws only when Redis fails.
 */
export async function publishLiveEvent(
  redis: Redis,
  keys: ClusterKeys,
  origin: EventOrigin,
  event: AgentEvent,
): Promise<number> {
  const payload = JSON.stringify({ ...event, ...origin, ts: Date.now() });
  const { sessionId } = origin;
  return withPublishScript(redis).yiemPublishLiveEvent(
    keys.seq(sessionId),
    keys.eventChannel(sessionId),
    payload,
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
  redis: Redis,
  keys: ClusterKeys,
  sessionId: string,
  afterSeq: number,
): Promise<BusEvent[]> {
  const entries = await redis.xrange(keys.stream(sessionId), `(${afterSeq}-1`, "+");
  const events: BusEvent[] = [];
  for (const [, fields] of entries) {
    const event = parseBusEvent(fields[1] ?? "");
    if (event) events.push(event);
  }
  return events;
}

/** The sequence number of the session's latest event (0 when it has none). */
export async function latestSeq(
  redis: Redis,
  keys: ClusterKeys,
  sessionId: string,
): Promise<number> {
  return Number((await redis.get(keys.seq(sessionId))) ?? 0);
}

/** Publishes a run's events without waiting for each reply, and waits for all of them on `flush`. */
export interface EventPublisher {
  /** Sends the event to Redis and returns at once. Never throws; a failed publish is dropped. */
  emit(event: AgentEvent, extra?: Partial<EventOrigin>): Promise<void>;
  /** The same for a live-only event (see `publishLiveEvent`), in order with the others. */
  emitLive(event: AgentEvent): Promise<void>;
  /** Resolves once every event sent so far has been published (or has failed). */
  flush(): Promise<void>;
}

/**
 * A publisher for one origin (session and run). Events go out on one connection, so Redis
 * applies them in the order they were sent, before any command sent after them on the same
 * connection (a job added for a call is always behind the call's start event); waiting for
 * each reply would only add a round trip per event to the run.
 */
export function createEventPublisher(
  redis: Redis,
  keys: ClusterKeys,
  origin: EventOrigin,
): EventPublisher {
  const pending = new Set<Promise<unknown>>();
  const track = (sent: Promise<unknown>) => {
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
    return Promise.resolve();
  };
  return {
    emit(event, extra = {}) {
      return track(
        publishEvent(redis, keys, { ...origin, ...extra }, event).catch(() => undefined),
      );
    },
    emitLive(event) {
      return track(publishLiveEvent(redis, keys, origin, event).catch(() => undefined));
    },
    async flush() {
      await Promise.all(pending);
    },
  };
}
