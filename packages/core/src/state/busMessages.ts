/** A newline: what separates the events of one bus message. */
const NEWLINE = 0x0a;

/**
 * The events of one message on a session's event channel, each as a buffer of its own (a copy:
 * `bytes` may be a view of the connection's read buffers). A message holds one event's JSON, or
 * several, one a line, in the order they were stored: a script that stores a batch of events
 * publishes them at once (`publishBatch` in `redis/scripts/appendEvent.lib.lua`). An event's
 * JSON never holds a raw newline (JSON escapes it), so every line is one whole event.
 *
 * @example splitBusMessage(Buffer.from('{"seq":1,…}\n{"seq":2,…}')) // two buffers
 */
export function splitBusMessage(bytes: Buffer): Buffer[] {
  let from = 0;
  let end = bytes.indexOf(NEWLINE, from);
  if (end < 0) return [Buffer.from(bytes)];
  const events: Buffer[] = [];
  while (end >= 0) {
    if (end > from) events.push(Buffer.from(bytes.subarray(from, end)));
    from = end + 1;
    end = bytes.indexOf(NEWLINE, from);
  }
  if (from < bytes.length) events.push(Buffer.from(bytes.subarray(from)));
  return events;
}
