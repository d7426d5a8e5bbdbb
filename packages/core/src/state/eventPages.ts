import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { ReadEvent } from "./readEvent.js";

/** One page of a session's stored events: the events in order, and whether more may follow. */
export interface EventPage {
  events: ReadEvent[];
  /** True when the page is full: the stream may hold more events after its last one. */
  more: boolean;
}

/**
 * At most `count` of a session's stored events with a sequence number above `afterSeq`, in
 * order, each parsed with its JSON text: one `XRANGE … COUNT`, so a reader far behind
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
  const entries = await redis.xrange(keys.stream(sessionId), `(${afterSeq}-1`, "+", "COUNT", count);
  const events: ReadEvent[] = [];
  for (const [, fields] of entries) {
    const read = ReadEvent.fromText(fields[1] ?? "");
    if (read) events.push(read);
  }
  return { events, more: entries.length >= count };
}
