import type { BusEvent } from "../protocol/busEvent.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { onAbort } from "../tools/abortListener.js";
import { latestSeq, parseBusEvent, readEventsAfter } from "./eventBus.js";

/** Options of `streamSessionEvents`. */
export interface SessionEventStreamOptions {
  /** For reads (replay, catch-up). */
  command: RedisClient;
  /** A connection of its own, put into subscriber mode and closed when the stream ends. */
  subscriber: RedisClient;
  keys: ClusterKeys;
  sessionId: string;
  /** Replay every stored event first; otherwise start with the next event. */
  fromStart?: boolean;
  /**
   * Replay the stored events after this sequence number first (a reader resuming where it
   * stopped: the last `seq` it saw); wins over `fromStart`.
   */
  afterSeq?: number;
  /** Ends the stream right after the first event for which this returns true. */
  until?: (event: BusEvent) => boolean;
  /** Ends the stream when it fires. */
  signal?: AbortSignal;
  /** How often to look for events missed while the subscriber was cut off. Default 1000 ms. */
  catchUpMs?: number;
}

/**
 * A session's events as an async iterable, each exactly once and in sequence order: live
 * from pub/sub, replayed from the stream when `fromStart`, and any gap (a subscriber that was
 * cut off, a message published before the subscription) filled from the stream by sequence
 * number. Live-only events (`live: true`: streamed text) come through in their place when
 * the stream is in step (their `seq` is the last event's) and are dropped otherwise: they are
 * never replayed, and the stored `messageEnd` carries their text. Ends on `until`, on
 * `signal`, or when the consumer stops iterating.
 *
 * @example
 * for await (const event of streamSessionEvents({ ...conns, keys, sessionId, until: isAgentEnd })) render(event);
 */
export async function* streamSessionEvents(
  options: SessionEventStreamOptions,
): AsyncGenerator<BusEvent> {
  const { command, subscriber, keys, sessionId } = options;
  const ready: BusEvent[] = [];
  let lastSeq = -1; // unknown until the baseline is read
  let wake: (() => void) | undefined;
  let chain = Promise.resolve();
  const notify = () => wake?.();

  // Live events must follow on without a gap; events read from the stream are the truth
  // (a capped stream may have dropped old ones, so a gap there is final).
  const accept = (events: BusEvent[], fromStream = false) => {
    for (const event of events) {
      if (event.live) {
        if (event.seq === lastSeq) ready.push(event);
        continue;
      }
      if (event.seq <= lastSeq) continue;
      if (!fromStream && event.seq > lastSeq + 1) return catchUp();
      ready.push(event);
      lastSeq = event.seq;
    }
    notify();
  };
  const catchUp = () => {
    chain = chain
      .then(async () => accept(await readEventsAfter(command, keys, sessionId, lastSeq), true))
      .catch(() => undefined); // Redis away: the next catch-up tries again
  };
  const onMessage = (channel: string, text: string) => {
    if (channel !== keys.eventChannel(sessionId) || lastSeq < 0) return;
    const event = parseBusEvent(text);
    if (event) chain = chain.then(() => accept([event]));
  };

  const onError = () => undefined; // ioredis reconnects by itself; catch-up fills the gap
  subscriber.on("error", onError);
  subscriber.on("message", onMessage);
  subscriber.on("ready", catchUp);
  await subscriber.subscribe(keys.eventChannel(sessionId));
  lastSeq = await baselineOf(options);
  catchUp();
  const timer = setInterval(catchUp, options.catchUpMs ?? 1000);
  const stopListening = options.signal ? onAbort(options.signal, notify) : () => undefined;
  try {
    for (;;) {
      const event = ready.shift();
      if (event) {
        yield event;
        if (options.until?.(event)) return;
        continue;
      }
      if (options.signal?.aborted) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    stopListening();
    clearInterval(timer);
    subscriber.off("message", onMessage);
    subscriber.off("ready", catchUp);
    subscriber.disconnect();
  }
}

/** The sequence number the stream starts after: `afterSeq`, 0 for `fromStart`, else the latest. */
function baselineOf(options: SessionEventStreamOptions): Promise<number> | number {
  if (options.afterSeq !== undefined) return Math.max(0, Math.floor(options.afterSeq));
  if (options.fromStart) return 0;
  return latestSeq(options.command, options.keys, options.sessionId);
}
