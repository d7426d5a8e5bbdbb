import type { BusEvent } from "../protocol/busEvent.js";
import { parseBusEvent } from "./eventBus.js";
import type { NumberedEvent } from "./readerQueue.js";

/** What a reader orders and frames an event by: its number, type and whether it is live only. */
export interface EventHead {
  seq: number;
  type: BusEvent["type"];
  live?: true;
}

/** A form events are handed over in, made from each event as read (see `EventForm`). */
export interface ReadEventForm<T extends NumberedEvent> {
  /** The event in this form; `undefined` when it cannot be made (its JSON does not parse). */
  from(read: ReadEvent): T | undefined;
}

/**
 * How the publishing scripts begin every event's JSON (`{"seq":N,` spliced before the event,
 * `"live":true,` after it for a live one, then the event, whose first field is its type): read
 * from the head alone, without parsing the rest. Anything else is parsed whole.
 */
const HEAD = /^\{"seq":(\d{1,15}),("live":true,)?"type":"([A-Za-z]{1,64})"/;

/** Bytes enough for `HEAD`. */
const HEAD_BYTES = 128;

/**
 * One event as a reader read it (a bus message, a stream entry): its head, read once, and its
 * parse and its JSON's bytes, each made at most once and only when a reader's form asks. A
 * bus message is one `ReadEvent` for every reader of its channel, so each form of it is made
 * once (`in`) and shared: a relay of its bytes never parses a large event, and a parsed reader
 * never holds its bytes.
 *
 * @example const read = ReadEvent.fromText(entryText); read?.in(PARSED_EVENTS);
 */
export class ReadEvent {
  private parsedEvent: BusEvent | undefined | null;
  private bytesRead: Buffer | undefined;
  private readonly forms = new Map<ReadEventForm<NumberedEvent>, NumberedEvent | undefined>();

  private constructor(
    readonly head: EventHead,
    /** The size of its JSON (bytes of a message, characters of a stream entry). */
    readonly size: number,
    private readonly source: { bytes: Buffer } | { text: string },
    parsed?: BusEvent,
  ) {
    this.parsedEvent = parsed;
  }

  /**
   * A bus message's bytes (owned: the caller made them for this event alone), or `undefined`
   * when they are not a bus event.
   */
  static fromMessage(bytes: Buffer): ReadEvent | undefined {
    const head = HEAD.exec(bytes.toString("latin1", 0, Math.min(bytes.length, HEAD_BYTES)));
    if (head && bytes[bytes.length - 1] === 0x7d /* } */) {
      const seq = Number(head[1]);
      const type = head[3] as BusEvent["type"];
      return new ReadEvent(head[2] ? { seq, type, live: true } : { seq, type }, bytes.length, {
        bytes,
      });
    }
    const event = parseBusEvent(bytes.toString("utf8"));
    return event && new ReadEvent(headOf(event), bytes.length, { bytes }, event);
  }

  /** A stream entry's JSON text, parsed now, or `undefined` when it is not a bus event. */
  static fromText(text: string): ReadEvent | undefined {
    const event = parseBusEvent(text);
    return event && new ReadEvent(headOf(event), text.length, { text }, event);
  }

  /** The event parsed (once); `undefined` when its JSON does not parse as a bus event. */
  parsed(): BusEvent | undefined {
    if (this.parsedEvent === undefined) {
      const source = this.source;
      const text = "text" in source ? source.text : source.bytes.toString("utf8");
      this.parsedEvent = parseBusEvent(text) ?? null;
    }
    return this.parsedEvent ?? undefined;
  }

  /** The UTF-8 bytes of its JSON (made once from a stream entry's text). */
  bytes(): Buffer {
    const source = this.source;
    if ("bytes" in source) return source.bytes;
    this.bytesRead ??= Buffer.from(source.text);
    return this.bytesRead;
  }

  /** The event in `form`, made once per form. */
  in<T extends NumberedEvent>(form: ReadEventForm<T>): T | undefined {
    if (!this.forms.has(form)) this.forms.set(form, form.from(this));
    return this.forms.get(form) as T | undefined;
  }
}

function headOf(event: BusEvent): EventHead {
  return event.live
    ? { seq: event.seq, type: event.type, live: true }
    : { seq: event.seq, type: event.type };
}
