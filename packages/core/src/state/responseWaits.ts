import type { RunAnswer } from "../protocol/coordinatorJob.js";
import { ResponseTimeoutError } from "../protocol/errors.js";
import type { RedisClient } from "../redis/redisConnection.js";

/** An input waited for: its id, and its session when the waiter knows it. */
export interface AwaitedInput {
  inputId: string;
  sessionId: string | undefined;
}

/** Reads the stored answers of these inputs, in order (`undefined` where none is stored yet). */
export type ReadResponses = (inputs: AwaitedInput[]) => Promise<Array<RunAnswer | undefined>>;

/** Options of `ResponseWaits`. */
export interface ResponseWaitsOptions {
  read: ReadResponses;
  /** How often every open wait reads its response, in case an announcement was missed. */
  recheckMs: number;
  /** Told when reading the responses failed (they are read again on the next announcement or recheck). */
  onReadError?: (err: unknown) => void;
}

/** Options of one wait. */
export interface WaitOptions {
  /** The input's session, when known (the coordinator always knows it; a client may not). */
  sessionId?: string;
  /** Reject with `ResponseTimeoutError` after this long. Default: no timeout. */
  timeoutMs?: number;
}

/** One wait for an input's response; `cancel` ends it with `reason`. */
export interface ResponseWait {
  promise: Promise<RunAnswer>;
  cancel(reason: Error): void;
}

interface Waiter {
  sessionId: string | undefined;
  resolve(answer: RunAnswer): void;
  reject(reason: Error): void;
}

/**
 * Waits for run responses, for coordinators and clients alike. A run announces the input ids
 * it answered on the responses channel once their response is stored: one shared subscription
 * (`listen`) wakes the waits of those ids, which read the stored response (the truth) in one
 * round trip. A wait also ends when the caller's own run answered it (`settle`, no Redis read),
 * when it is cancelled, or at its timeout. Nothing polls per wait: after a reconnect, and every
 * `recheckMs` as a safety net, all open waits read their responses at once. Waits are also
 * grouped by session, for a coordinator to tell which sessions someone waits on.
 */
export class ResponseWaits {
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly bySession = new Map<string, Set<string>>();
  private recheckTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: ResponseWaitsOptions) {}

  /** Listens on the responses channel `channel` with `subscriber` (a connection that only subscribes). */
  async listen(subscriber: RedisClient, channel: string): Promise<void> {
    subscriber.on("message", (from: string, text: string) => {
      if (from === channel) void this.recheck(parseIds(text));
    });
    let subscribedOnce = false;
    subscriber.on("ready", () => {
      if (subscribedOnce) void this.recheckAll(); // announcements missed while away
    });
    await subscriber.subscribe(channel);
    subscribedOnce = true;
    if (this.closed) return;
    this.recheckTimer = setInterval(() => void this.recheckAll(), this.options.recheckMs);
    this.recheckTimer.unref();
  }

  /**
   * Starts waiting for the response to `inputId`. A coordinator registers before recording the
   * input; a caller that may come after the response calls `recheck` once it has registered.
   */
  wait(inputId: string, options: WaitOptions = {}): ResponseWait {
    let waiter: Waiter | undefined;
    const promise = new Promise<RunAnswer>((resolve, reject) => {
      waiter = { sessionId: options.sessionId, resolve, reject };
    });
    const entry = waiter as Waiter;
    this.add(inputId, entry);
    const cancel = (reason: Error) => {
      clearTimeout(timer);
      if (this.remove(inputId, entry)) entry.reject(reason);
    };
    const { timeoutMs } = options;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => cancel(new ResponseTimeoutError(inputId, timeoutMs)), timeoutMs);
    if (timer)
      promise.then(
        () => clearTimeout(timer),
        () => undefined,
      );
    return { promise, cancel };
  }

  /** Ends the waits of these inputs with `answer` (a run of the caller answered them). */
  settle(inputIds: string[], answer: RunAnswer): void {
    for (const inputId of inputIds) {
      for (const waiter of this.waiters.get(inputId) ?? []) {
        this.remove(inputId, waiter);
        waiter.resolve(answer);
      }
    }
  }

  /** Sessions with open waits (of the waits that named their session). */
  sessions(): string[] {
    return [...this.bySession.keys()];
  }

  /** True when some wait of `sessionId` is open. */
  hasWaitsIn(sessionId: string): boolean {
    return this.bySession.has(sessionId);
  }

  /** Reads the stored responses of these inputs and ends the waits that have one. Never throws. */
  async recheck(inputIds: string[]): Promise<void> {
    const open = inputIds.filter((id) => this.waiters.has(id));
    if (open.length === 0) return;
    try {
      const responses = await this.options.read(
        open.map((inputId) => ({
          inputId,
          sessionId: this.waiters.get(inputId)?.find((w) => w.sessionId !== undefined)?.sessionId,
        })),
      );
      open.forEach((inputId, i) => {
        const response = responses[i];
        if (response) this.settle([inputId], response);
      });
    } catch (err) {
      this.options.onReadError?.(err);
    }
  }

  /** Stops the periodic recheck. Open waits stay open (until settled, cancelled or timed out). */
  close(): void {
    this.closed = true;
    clearInterval(this.recheckTimer);
  }

  private recheckAll(): Promise<void> {
    return this.recheck([...this.waiters.keys()]);
  }

  private add(inputId: string, waiter: Waiter): void {
    this.waiters.set(inputId, [...(this.waiters.get(inputId) ?? []), waiter]);
    if (waiter.sessionId === undefined) return;
    const ids = this.bySession.get(waiter.sessionId) ?? new Set<string>();
    ids.add(inputId);
    this.bySession.set(waiter.sessionId, ids);
  }

  private remove(inputId: string, waiter: Waiter): boolean {
    const list = this.waiters.get(inputId);
    if (!list?.includes(waiter)) return false;
    const rest = list.filter((w) => w !== waiter);
    if (rest.length > 0) this.waiters.set(inputId, rest);
    else this.waiters.delete(inputId);
    const { sessionId } = waiter;
    if (sessionId === undefined || rest.some((w) => w.sessionId === sessionId)) return true;
    const ids = this.bySession.get(sessionId);
    ids?.delete(inputId);
    if (ids?.size === 0) this.bySession.delete(sessionId);
    return true;
  }
}

/** The input ids of a responses-channel message (a JSON array); nothing for anything else. */
function parseIds(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}
