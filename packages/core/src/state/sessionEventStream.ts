import { EventReaderBehindError } from "../protocol/errors.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { onAbort } from "../tools/abortListener.js";
import { latestSeq } from "./eventBus.js";
import type { EventForm } from "./eventForms.js";
import { readEventPage } from "./eventPages.js";
import { ReadEvent } from "./readEvent.js";
import {
  DEFAULT_READER_QUEUE_BYTES,
  DEFAULT_READER_QUEUE_EVENTS,
  type NumberedEvent,
  ReaderQueue,
} from "./readerQueue.js";
import type { SessionEventHub } from "./sessionEventHub.js";

/** Most stored events one replay read asks for. */
const REPLAY_PAGE_EVENTS = 100;

/** Options of `streamSessionEvents`, whose events come in form `T`. */
export interface SessionEventStreamOptions<T extends NumberedEvent> {
  /** For reads (replay, gap fill). */
  command: RedisClient;
  /** The process's shared subscriber (`SessionEventHub`): the stream holds its session's channel. */
  hub: SessionEventHub;
  keys: ClusterKeys;
  sessionId: string;
  /** The form the events come in (`PARSED_EVENTS`, `ENCODED_EVENTS`). */
  form: EventForm<T>;
  /** Replay every stored event first; otherwise start with the next event. */
  fromStart?: boolean;
  /**
   * Replay the stored events after this sequence number first (a reader resuming where it
   * stopped: the last `seq` it saw); wins over `fromStart`.
   */
  afterSeq?: number;
  /** Ends the stream right after the first event for which this returns true. */
  until?: (event: T) => boolean;
  /** Ends the stream when it fires. */
  signal?: AbortSignal;
  /** How long a failed gap read waits before it is tried again. Default 1000 ms. */
  retryMs?: number;
  /** Most events given to the reader and not yet taken (default `DEFAULT_READER_QUEUE_EVENTS`). */
  maxQueuedEvents?: number;
  /** Most bytes of event JSON given to the reader and not yet taken (default `DEFAULT_READER_QUEUE_BYTES`). */
  maxQueuedBytes?: number;
  /**
   * Told the moment the reader falls behind (before the stream throws
   * `EventReaderBehindError` at its next step), for a reader that waits on something else
   * meanwhile (a socket's `drain`).
   */
  onBehind?: (error: EventReaderBehindError) => void;
  /**
   * Told once the stream is live: its channel subscribed (Redis acknowledged it) and the number
   * it starts after known, so every event published from then on reaches it, kept for the
   * reader until taken (within the queue's bounds). The stream starts at its first `next`: a
   * caller that sends what makes the events (a run's request) once told loses none of them,
   * live text included.
   */
  onLive?: () => void;
}

/**
 * A session's events as an async iterable, in the form `options.form` (parsed objects, or the
 * bytes of their JSON for a relay), each exactly once and in sequence order: live from pub/sub (the hub's shared subscription), replayed from the stream when `fromStart` or
 * `afterSeq`, and any gap filled from the stream by sequence number. A gap is read when a
 * live event skips a number, when the hub's subscriber came back (`resubscribed`: whatever
 * was published meanwhile), and once right after the subscription is in place (what came
 * before it); nothing is read while the stream is in step. Live-only events (`live: true`:
 * streamed text) come through in their place when the stream is in step (their `seq` is the
 * last event's) and are dropped otherwise: they are never replayed, and the stored
 * `messageEnd` carries their text. Ends on `until`, on `signal`, when the hub closes, or when
 * the consumer stops iterating; its end releases the channel.
 *
 * Memory per reader is bounded: the events given to the reader and not yet taken are held in
 * a queue of at most `maxQueuedEvents` events and `maxQueuedBytes` bytes (plus one event of
 * any size). The stream is read a page at a time (at most `REPLAY_PAGE_EVENTS`, fewer after a
 * page of large events did not fit), the next page only once the reader has taken the last
 * one, never whole. A live event that finds the queue full
 * (the reader stopped taking them) ends the stream with `EventReaderBehindError`, its queue
 * dropped: never buffered without limit, and nothing lost, since the reader reads on after
 * the last event it took. A live event is read once for every reader of its channel
 * (`ReadEvent`: its head only, then parsed or kept as bytes as the readers' forms ask) and
 * reaches them as one shared value per form: readers must not change it.
 *
 * @example
 * for await (const event of streamSessionEvents({ command, hub, keys, sessionId, form: PARSED_EVENTS, until: isAgentEnd })) render(event);
 */
export async function* streamSessionEvents<T extends NumberedEvent>(
  options: SessionEventStreamOptions<T>,
): AsyncGenerator<T> {
  const { command, keys, sessionId, form } = options;
  const queue = new ReaderQueue<T>(
    options.maxQueuedEvents ?? DEFAULT_READER_QUEUE_EVENTS,
    options.maxQueuedBytes ?? DEFAULT_READER_QUEUE_BYTES,
  );
  const maxPage = Math.max(1, Math.min(REPLAY_PAGE_EVENTS, queue.maxEvents));
  // Pages shrink to what fit last time (large events): a page is never read to be dropped.
  let pageEvents = maxPage;
  let lastSeq = -1; // unknown until the baseline is read
  let delivered = 0; // the last stored event the reader took
  /** The stream holds events past `lastSeq` not yet read: the next page is read once the queue is empty. */
  let behind = false;
  let readQueued = false;
  let cut: EventReaderBehindError | undefined;
  let wake: (() => void) | undefined;
  let chain = Promise.resolve();
  let retry: NodeJS.Timeout | undefined;
  let ended = false;
  let endNow: () => void = () => undefined;
  const endedEarly = new Promise<false>((resolve) => {
    endNow = () => resolve(false);
  });
  const notify = () => wake?.();
  /** Queues `item` in the reader's form (one that does not parse is left out). */
  const push = (item: ReadEvent) => {
    const event = item.in(form);
    if (event !== undefined) queue.push({ event, size: item.size });
  };

  const fallBehind = () => {
    cut = new EventReaderBehindError(sessionId, Math.max(0, delivered));
    queue.clear();
    ended = true;
    options.onBehind?.(cut);
    notify();
  };
  // Live events must follow on without a gap; events read from the stream are the truth
  // (a capped stream may have dropped old ones, so a gap there is final).
  const accept = (events: ReadEvent[], fromStream = false) => {
    if (cut) return;
    for (const item of events) {
      const event = item.head;
      if (event.live) {
        if (!behind && event.seq === lastSeq && queue.fits(item.size)) push(item);
        continue;
      }
      if (event.seq <= lastSeq) continue;
      if (!fromStream) {
        if (behind) continue; // read from the stream with the next page
        if (event.seq > lastSeq + 1) return catchUp();
        if (!queue.fits(item.size)) return fallBehind();
      } else if (!queue.fits(item.size)) {
        behind = true; // the rest of the page is read again once the reader took these
        pageEvents = Math.max(1, events.indexOf(item));
        break;
      }
      push(item);
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
  // One read waiting in the chain is enough: it reads after `lastSeq` as it is by then.
  const catchUp = () => {
    if (readQueued) return;
    readQueued = true;
    chain = chain
      .then(async () => {
        readQueued = false;
        const page = await readEventPage(command, keys, sessionId, lastSeq, pageEvents);
        behind = page.more;
        pageEvents = Math.min(maxPage, pageEvents * 2);
        accept(page.events, true);
      })
      .catch(retryLater); // Redis away: read again in a while
  };
  const hold = options.hub.hold(sessionId, {
    message(bytes) {
      if (lastSeq < 0 || cut) return;
      const item = readShared(bytes);
      if (item) chain = chain.then(() => accept([item]));
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
    delivered = lastSeq;
    catchUp();
    options.onLive?.();
    for (;;) {
      if (cut) throw cut;
      const event = queue.shift();
      if (event) {
        if (!event.live) delivered = event.seq;
        yield event;
        if (options.until?.(event)) return;
        continue;
      }
      if (options.signal?.aborted || ended) return;
      if (behind) catchUp(); // the reader took the last page: read the next
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    ended = true;
    queue.clear();
    stopListening();
    clearTimeout(retry);
    hold.release();
  }
}

/** The last message read: every listener of a channel gets the same bytes, read once. */
let lastMessage: { bytes: Buffer; read: ReadEvent | undefined } | undefined;

/** A bus message as read, shared with the other readers of the same message. */
function readShared(bytes: Buffer): ReadEvent | undefined {
  if (lastMessage?.bytes !== bytes) lastMessage = { bytes, read: ReadEvent.fromMessage(bytes) };
  return lastMessage.read;
}

/** The sequence number the stream starts after: `afterSeq`, 0 for `fromStart`, else the latest. */
function baselineOf(
  options: Pick<
    SessionEventStreamOptions<NumberedEvent>,
    "command" | "keys" | "sessionId" | "fromStart" | "afterSeq"
  >,
): Promise<number> | number {
  if (options.afterSeq !== undefined) return Math.max(0, Math.floor(options.afterSeq));
  if (options.fromStart) return 0;
  return latestSeq(options.command, options.keys, options.sessionId);
}
