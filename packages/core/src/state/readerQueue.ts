/** How many events an event reader's queue holds by default (`maxQueuedEvents`). */
export const DEFAULT_READER_QUEUE_EVENTS = 1000;

/** How many bytes of event JSON an event reader's queue holds by default (`maxQueuedBytes`): 8 MiB. */
export const DEFAULT_READER_QUEUE_BYTES = 8 * 1024 * 1024;

/** What a reader's queue orders events by: the event's number, and whether it is live only. */
export interface NumberedEvent {
  seq: number;
  live?: true;
}

/** An event (in the form its reader takes it) and the size of its JSON text (in characters). */
export interface SizedEvent<T extends NumberedEvent> {
  event: T;
  size: number;
}

/**
 * The events one reader of a session's events has been given and not yet taken, bounded by
 * count and by bytes of event JSON. One event always fits in an empty queue, whatever its
 * size (so a single large event never stalls a reader); past that, `fits` says no and the
 * caller decides (read it again from the stream later, or cut the reader). Never grows past
 * its bounds plus that one event.
 */
export class ReaderQueue<T extends NumberedEvent> {
  private readonly items: SizedEvent<T>[] = [];
  private bytes = 0;

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number,
  ) {}

  /** True when an event of `size` may be added now. */
  fits(size: number): boolean {
    if (this.items.length === 0) return true;
    return this.items.length < this.maxEvents && this.bytes + size <= this.maxBytes;
  }

  /** Adds an event (the caller asked `fits`). */
  push(item: SizedEvent<T>): void {
    this.items.push(item);
    this.bytes += item.size;
  }

  /** The oldest event, taken out; `undefined` when empty. */
  shift(): T | undefined {
    const item = this.items.shift();
    if (!item) return undefined;
    this.bytes -= item.size;
    return item.event;
  }

  /** True when nothing is queued. */
  isEmpty(): boolean {
    return this.items.length === 0;
  }

  /** Drops every queued event. */
  clear(): void {
    this.items.length = 0;
    this.bytes = 0;
  }
}
