import type { BusEvent, EncodedBusEvent } from "../protocol/busEvent.js";
import type { ReadEvent, ReadEventForm } from "./readEvent.js";
import type { NumberedEvent } from "./readerQueue.js";

/**
 * The form a session's event stream (`streamSessionEvents`) hands its events over in, made
 * from each event as read (`ReadEvent`). A live event is made into each form once, whatever
 * the number of readers: every reader of it in that form shares what was made, so a form's
 * value must never be changed by a reader.
 *
 * @example const form: EventForm<BusEvent> = PARSED_EVENTS;
 */
export type EventForm<T extends NumberedEvent> = ReadEventForm<T>;

/** Events as parsed objects (`YiemClient.events`). */
export const PARSED_EVENTS: EventForm<BusEvent> = { from: (read) => read.parsed() };

/** Events as the UTF-8 bytes of their JSON (`YiemClient.encodedEvents`): what relays pass on. */
export const ENCODED_EVENTS: EventForm<EncodedBusEvent> = { from: encodeReadEvent };

/**
 * An event as the bytes of its JSON as the bus carried it (never parsed nor formatted again),
 * with its head. A JSON holding a line break (the publishing scripts never write one) is
 * parsed and written again on one line, so a relay's line-based framing (server-sent events)
 * can never be broken by an event; one that does not parse is left out.
 *
 * @example encodeReadEvent(read)?.json.equals(read.bytes())
 */
export function encodeReadEvent(read: ReadEvent): EncodedBusEvent | undefined {
  let json = read.bytes();
  if (json.includes(0x0a) || json.includes(0x0d)) {
    const event = read.parsed();
    if (!event) return undefined;
    json = Buffer.from(JSON.stringify(event)); // JSON.stringify writes no line break
  }
  return { ...read.head, json };
}
