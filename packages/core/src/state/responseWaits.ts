import type { RunAnswer } from "../protocol/coordinatorJob.js";
import { ResponseTimeoutError } from "../protocol/errors.js";
import type { RedisClient } from "../redis/redisConnection.js";

/** An input waited for: its id, and its session when the waiter knows it. */
export interface AwaitedInput {
  requestId: string;
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
export type AnswerListener = (answer: RunAnswer, requestId: string) => void;

interface Waiter {
  sessionId: string | undefined;
  /** A promise's resolve, or a watch's listener (which is told the input too). */
  resolve(answer: RunAnswer, requestId: string): void;
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
  /**
   * Inputs a run of this process is answering now (`answering`), each with whether a recheck
   * left it alone meanwhile: its own announcement most often arrives before the reply of the
   * script that made it, and reading the answer then would only repeat what `settle` brings.
   */
  private readonly answeringHere = new Map<string, boolean>();
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
   * Starts waiting for the response to `requestId`. A coordinator registers before recording the
   * input; a caller that may come after the response calls `recheck` once it has registered.
   */
  wait(requestId: string, options: WaitOptions = {}): ResponseWait {
    let waiter: Waiter | undefined;
    const promise = new Promise<RunAnswer>((resolve, reject) => {
      waiter = { sessionId: options.sessionId, resolve, reject };
    });
    const entry = waiter as Waiter;
    this.add(requestId, entry);
    const cancel = (reason: Error) => {
      clearTimeout(timer);
      if (this.remove(requestId, entry)) entry.reject(reason);
    };
    const { timeoutMs } = options;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => cancel(new ResponseTimeoutError(requestId, timeoutMs)), timeoutMs);
    if (timer)
      promise.then(
        () => clearTimeout(timer),
        () => undefined,
      );
    return { promise, cancel };
  }

  /**
   * Watches `requestId` (of `sessionId`) for its answer: `listener` is told it once, as a wait
   * would be (an announcement, the caller's own run, a recheck), unless `unwatch` came first.
   * It never times out. Costs one small record: no promise, no closure per input.
   *
   * @example answers.watch(jobId, sessionId, onAnswer); // onAnswer(answer, jobId) later
   */
  watch(requestId: string, sessionId: string, listener: AnswerListener): void {
    this.add(requestId, { sessionId, resolve: listener, reject: ignoreCancel });
  }

  /** Stops a `watch` of `requestId` by `listener` (a no-op once it was told the answer). */
  unwatch(requestId: string, listener: AnswerListener): void {
    const waiter = this.waiters.get(requestId)?.find((w) => w.resolve === listener);
    if (waiter) this.remove(requestId, waiter);
  }

  /**
   * Says that a run of the caller is storing the answers of these inputs now: until the
   * returned function is called, a recheck leaves them alone (their own announcement reads
   * nothing). Call it once the run's close is done, after `settle` when it answered them:
   * inputs a recheck left alone and still waited for (the close failed, or another holder
   * answered them) are read then. Never throws.
   */
  answering(requestIds: readonly string[]): () => void {
    for (const requestId of requestIds) this.answeringHere.set(requestId, false);
    return () => {
      const left = requestIds.filter((requestId) => this.answeringHere.get(requestId) === true);
      for (const requestId of requestIds) this.answeringHere.delete(requestId);
      if (left.length > 0) void this.recheck(left);
    };
  }

  /** Ends the waits of these inputs with `answer` (a run of the caller answered them). */
  settle(requestIds: string[], answer: RunAnswer): void {
    for (const requestId of requestIds) {
      for (const waiter of this.waiters.get(requestId) ?? []) {
        this.remove(requestId, waiter);
        waiter.resolve(answer, requestId);
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
  async recheck(requestIds: string[]): Promise<void> {
    const open = requestIds.filter((id) => this.waiters.has(id) && !this.leftAlone(id));
    for (let i = 0; i < open.length; i += RECHECK_ROUND)
      await this.recheckRound(open.slice(i, i + RECHECK_ROUND));
  }

  /** True when a run of this process is answering `requestId` now (see `answering`): noted. */
  private leftAlone(requestId: string): boolean {
    if (!this.answeringHere.has(requestId)) return false;
    this.answeringHere.set(requestId, true);
    return true;
  }

  private async recheckRound(requestIds: string[]): Promise<void> {
    const open = requestIds.filter((id) => this.waiters.has(id)); // some ended meanwhile
    if (open.length === 0) return;
    try {
      const responses = await this.options.read(
        open.map((requestId) => ({
          requestId,
          sessionId: this.waiters.get(requestId)?.find((w) => w.sessionId !== undefined)?.sessionId,
        })),
      );
      open.forEach((requestId, i) => {
        const response = responses[i];
        if (response) this.settle([requestId], response);
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

  private add(requestId: string, waiter: Waiter): void {
    const list = this.waiters.get(requestId);
    this.waiters.set(requestId, list ? [...list, waiter] : [waiter]);
    const { sessionId } = waiter;
    if (sessionId === undefined || list?.some((w) => w.sessionId === sessionId)) return;
    this.bySession.set(sessionId, (this.bySession.get(sessionId) ?? 0) + 1);
  }

  private remove(requestId: string, waiter: Waiter): boolean {
    const list = this.waiters.get(requestId);
    if (!list?.includes(waiter)) return false;
    const rest = list.filter((w) => w !== waiter);
    if (rest.length > 0) this.waiters.set(requestId, rest);
    else this.waiters.delete(requestId);
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
