import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { ReadEvent } from "./readEvent.js";
import { entriesAfter, eventTextsOf } from "./streamEntries.js";

/** One page of a session's stored events: the events in order, and whether more may follow. */
export interface EventPage {
  events: ReadEvent[];
  /** True when the page is full: the stream may hold more events after its last one. */
  more: boolean;
}

/**
 * A session's stored events with a sequence number above `afterSeq`, in order, from at most
 * `count` stream entries (an entry holds a batch's events: a page may hold more events than
 * `count`), each parsed with its JSON text: one `XRANGE … COUNT`, so a reader far behind
 * reads its replay a page at a time, never the whole stream at once. Throws only when Redis
 * fails.
 */
export async function readEventPage(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionId: string,
  afterSeq: number,
  count: number,
): Promise<EventPage> {
  const stream = keys.stream(sessionId);
  const entries = await redis.xrange(stream, entriesAfter(afterSeq), "+", "COUNT", count);
  const events: ReadEvent[] = [];
  for (const [, fields] of entries) {
    for (const text of eventTextsOf(fields)) {
      const read = ReadEvent.fromText(text);
      if (read && read.head.seq > afterSeq) events.push(read);
    }
  }
  return { events, more: entries.length >= count };
}
