import type { BusEvent } from "../protocol/busEvent.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { onAbort } from "../tools/abortListener.js";
import { latestSeq, parseBusEvent, readEventsAfter } from "./eventBus.js";
import type { SessionEventHub } from "./sessionEventHub.js";

/** Options of `streamSessionEvents`. */
export interface SessionEventStreamOptions {
  /** For reads (replay, gap fill). */
  command: RedisClient;
  /** The process's shared subscriber (`SessionEventHub`): the stream holds its session's channel. */
  hub: SessionEventHub;
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
  /** How long a failed gap read waits before it is tried again. Default 1000 ms. */
  retryMs?: number;
}

/**
 * A session's events as an async iterable, each exactly once and in sequence order: live
 * from pub/sub (the hub's shared subscription), replayed from the stream when `fromStart` or
 * `afterSeq`, and any gap filled from the stream by sequence number. A gap is read when a
 * live event skips a number, when the hub's subscriber came back (`resubscribed`: whatever
 * was published meanwhile), and once right after the subscription is in place (what came
 * before it); nothing is read while the stream is in step. Live-only events (`live: true`:
 * streamed text) come through in their place when the stream is in step (their `seq` is the
 * last event's) and are dropped otherwise: they are never replayed, and the stored
 * `messageEnd` carries their text. Ends on `until`, on `signal`, when the hub closes, or when
 * the consumer stops iterating; its end releases the channel.
 *
 * @example
 * for await (const event of streamSessionEvents({ command, hub, keys, sessionId, until: isAgentEnd })) render(event);
 */
export async function* streamSessionEvents(
  options: SessionEventStreamOptions,
): AsyncGenerator<BusEvent> {
  const { command, keys, sessionId } = options;
  const ready: BusEvent[] = [];
  let lastSeq = -1; // unknown until the baseline is read
  let wake: (() => void) | undefined;
  let chain = Promise.resolve();
  let retry: NodeJS.Timeout | undefined;
  let ended = false;
  let endNow: () => void = () => undefined;
  const endedEarly = new Promise<false>((resolve) => {
    endNow = () => resolve(false);
  });
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
  const retryLater = () => {
    retry ??= setTimeout(() => {
      retry = undefined;
      if (!ended) catchUp();
    }, options.retryMs ?? 1000);
  };
  const catchUp = () => {
    chain = chain
      .then(async () => accept(await readEventsAfter(command, keys, sessionId, lastSeq), true))
      .catch(retryLater); // Redis away: read again in a while
  };
  const hold = options.hub.hold(sessionId, {
    message(text) {
      if (lastSeq < 0) return;
      const event = parseBusEvent(text);
      if (event) chain = chain.then(() => accept([event]));
    },
    resubscribed() {
      if (lastSeq >= 0) catchUp();
    },
    closed() {
      ended = true;
      endNow();
      notify();
    },
  });
  const onEnd = () => {
    endNow();
    notify();
  };
  const stopListening = options.signal ? onAbort(options.signal, onEnd) : () => undefined;
  try {
    // A subscription that never comes (Redis away) must not keep an ended stream waiting.
    if (!(await Promise.race([hold.subscribed.then(() => true), endedEarly]))) return;
    lastSeq = await baselineOf(options);
    catchUp();
    for (;;) {
      const event = ready.shift();
      if (event) {
        yield event;
        if (options.until?.(event)) return;
        continue;
      }
      if (options.signal?.aborted || ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    ended = true;
    stopListening();
    clearTimeout(retry);
    hold.release();
  }
}

/** The sequence number the stream starts after: `afterSeq`, 0 for `fromStart`, else the latest. */
function baselineOf(options: SessionEventStreamOptions): Promise<number> | number {
  if (options.afterSeq !== undefined) return Math.max(0, Math.floor(options.afterSeq));
  if (options.fromStart) return 0;
  return latestSeq(options.command, options.keys, options.sessionId);
}
