/** A stream of events and what ends it (a read waiting too). */
export interface ClosableEvents<T> {
  stream: AsyncGenerator<T>;
  /** Ends the stream, a pending read included; idempotent. */
  close(): void;
}

/**
 * Opens events with `open`, which hands `onLive` on to `YiemClient.events` (or anything that
 * calls it once its stream is subscribed and its start known), and resolves with them once they
 * are live: their first read already under way, handed over first. A caller that then sends
 * what makes the events (a run's request, the decision that resumes a run) misses none of them,
 * a model's first text deltas included, however quick the coordinator. Resolves at once with a
 * stream that ended before it was live; resolves `undefined`, having closed it, when it is not
 * live within `timeoutMs` (default: no limit). Never rejects on its own.
 *
 * @example
 * const opened = await whenEventsLive((onLive) => ({ stream: client.events(id, { onLive, signal }), close }));
 * await client.send(message, { sessionId: id });
 */
export async function whenEventsLive<T>(
  open: (onLive: () => void) => ClosableEvents<T>,
  timeoutMs?: number,
): Promise<ClosableEvents<T> | undefined> {
  let markLive: () => void = () => {};
  const live = new Promise<"live">((resolve) => {
    markLive = () => resolve("live");
  });
  const events = open(() => markLive());
  const first = events.stream.next(); // a stream opens at its first read
  first.catch(() => {}); // read by the caller, or given up with the stream
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    if (timeoutMs !== undefined) timer = setTimeout(() => resolve("late"), timeoutMs);
  });
  try {
    // `first` settles before `live` only when the stream ended (or failed) early.
    if ((await Promise.race([live, late, first.catch(() => "failed")])) === "late") {
      events.close();
      return undefined;
    }
  } finally {
    clearTimeout(timer);
  }
  return { stream: startingWith(first, events.stream), close: events.close };
}

/** `stream` with the read already begun (`first`) given first. */
async function* startingWith<T>(
  first: Promise<IteratorResult<T>>,
  stream: AsyncGenerator<T>,
): AsyncGenerator<T> {
  try {
    const head = await first;
    if (head.done) return;
    yield head.value;
    yield* stream;
  } finally {
    await stream.return(undefined);
  }
}
