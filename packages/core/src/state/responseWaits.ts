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

/** How many inputs one round of a recheck reads at once. */
const RECHECK_ROUND = 500;

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

/**
 * Told an input's answer once it is known (`ResponseWaits.watch`): one function shared by
 * every input it watches, since it is told which input was answered.
 */
export type AnswerListener = (answer: RunAnswer, inputId: string) => void;

interface Waiter {
  sessionId: string | undefined;
  /** A promise's resolve, or a watch's listener (which is told the input too). */
  resolve(answer: RunAnswer, inputId: string): void;
  reject(reason: Error): void;
}

/** What a watch does when cancelled: nothing (it has no promise to reject). */
function ignoreCancel(): void {}

/**
 * Waits for run responses, for coordinators and clients alike. A run announces the input ids
 * it answered on the responses channel once their response is stored: one shared subscription
 * (`listen`) wakes the waits of those ids, which read the stored response (the truth) in one
 * round trip. A wait also ends when the caller's own run answered it (`settle`, no Redis read),
 * when it is cancelled, or at its timeout. Nothing polls per wait: after a reconnect, and every
 * `recheckMs` as a safety net, all open waits read their responses (in rounds). Waits are also
 * counted by session, for a coordinator to tell which sessions someone waits on. A wait is a
 * promise (`wait`), or, for a coordinator holding thousands of request jobs parked for days,
 * a watch (`watch`): a listener told the answer, costing one small record and no promise.
 */
export class ResponseWaits {
  private readonly waiters = new Map<string, Waiter[]>();
  /** Per session, how many inputs have a waiter naming it (a count: no set per session). */
  private readonly bySession = new Map<string, number>();
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

  /**
   * Watches `inputId` (of `sessionId`) for its answer: `listener` is told it once, as a wait
   * would be (an announcement, the caller's own run, a recheck), unless `unwatch` came first.
   * It never times out. Costs one small record: no promise, no closure per input.
   *
   * @example answers.watch(jobId, sessionId, onAnswer); // onAnswer(answer, jobId) later
   */
  watch(inputId: string, sessionId: string, listener: AnswerListener): void {
    this.add(inputId, { sessionId, resolve: listener, reject: ignoreCancel });
  }

  /** Stops a `watch` of `inputId` by `listener` (a no-op once it was told the answer). */
  unwatch(inputId: string, listener: AnswerListener): void {
    const waiter = this.waiters.get(inputId)?.find((w) => w.resolve === listener);
    if (waiter) this.remove(inputId, waiter);
  }

  /** Ends the waits of these inputs with `answer` (a run of the caller answered them). */
  settle(inputIds: string[], answer: RunAnswer): void {
    for (const inputId of inputIds) {
      for (const waiter of this.waiters.get(inputId) ?? []) {
        this.remove(inputId, waiter);
        waiter.resolve(answer, inputId);
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

  /**
   * Reads the stored responses of these inputs and ends the waits that have one, in rounds of
   * `RECHECK_ROUND` inputs: the recheck of ten thousand runs parked for approval neither holds
   * ten thousand commands in memory at once nor takes the event loop for all their replies.
   * Never throws.
   */
  async recheck(inputIds: string[]): Promise<void> {
    const open = inputIds.filter((id) => this.waiters.has(id));
    for (let i = 0; i < open.length; i += RECHECK_ROUND)
      await this.recheckRound(open.slice(i, i + RECHECK_ROUND));
  }

  private async recheckRound(inputIds: string[]): Promise<void> {
    const open = inputIds.filter((id) => this.waiters.has(id)); // some ended meanwhile
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
    const list = this.waiters.get(inputId);
    this.waiters.set(inputId, list ? [...list, waiter] : [waiter]);
    const { sessionId } = waiter;
    if (sessionId === undefined || list?.some((w) => w.sessionId === sessionId)) return;
    this.bySession.set(sessionId, (this.bySession.get(sessionId) ?? 0) + 1);
  }

  private remove(inputId: string, waiter: Waiter): boolean {
    const list = this.waiters.get(inputId);
    if (!list?.includes(waiter)) return false;
    const rest = list.filter((w) => w !== waiter);
    if (rest.length > 0) this.waiters.set(inputId, rest);
    else this.waiters.delete(inputId);
    const { sessionId } = waiter;
    if (sessionId === undefined || rest.some((w) => w.sessionId === sessionId)) return true;
    const left = (this.bySession.get(sessionId) ?? 1) - 1;
    if (left > 0) this.bySession.set(sessionId, left);
    else this.bySession.delete(sessionId);
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
