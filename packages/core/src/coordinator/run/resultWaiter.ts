import { Job, type Queue } from "bullmq";
import { parseToolJobEnd } from "../../protocol/toolJobEnds.js";
import type { ToolJobResult } from "../../protocol/toolJobs.js";
import type { ClusterKeys } from "../../redis/keys.js";
import { duplicateConnection, type RedisClient } from "../../redis/redisConnection.js";
import { DEFAULTS } from "../../settings/defaults.js";
import { parseToolDone } from "../../state/toolDoneMarkers.js";
import { onAbort } from "../../tools/abortListener.js";
import { awaitLateResult } from "./lateResults.js";
import { wakeIfUntaken } from "./queueWake.js";

/** How a tool job ended, as the coordinator sees it (`aborted`: the caller stopped waiting). */
export type JobEnd =
  | { kind: "completed"; value: ToolJobResult }
  | { kind: "failed"; reason: string }
  | { kind: "missing" }
  | { kind: "aborted" };

/** Everyone waiting for one job: the job is polled and listened for once, for all of them. */
interface Waiter {
  queue: Queue;
  resolves: Set<(end: JobEnd) => void>;
  timer: NodeJS.Timeout | undefined;
}

/**
 * When a waiter polls the job it waits for: first after `firstPollMs`, then every `pollMs`;
 * and when it checks that the job was taken (`takeCheckMs`, before the first poll: see
 * `wakeIfUntaken`).
 */
export interface ResultWaiterTiming {
  firstPollMs: number;
  pollMs: number;
  /** @defaultValue `TAKE_CHECK_MS` (none when not below `firstPollMs`) */
  takeCheckMs?: number;
}

/**
 * How long after its add a call's job is checked for a take, and its queue marked again if it
 * waits untaken (`wakeIfUntaken`): a tool worker takes a job within a few milliseconds of its
 * add when one is free.
 */
export const TAKE_CHECK_MS = 50;

/** Options of a `ResultWaiter`. */
export interface ResultWaiterOptions {
  /**
   * The process's subscriber connection (`ProcessRuntime.subscriber`), shared; when absent the
   * waiter opens one of its own and closes it with `close`.
   */
  subscriber?: RedisClient;
  /** Default: first poll after 250 ms, then every second. */
  timing?: ResultWaiterTiming;
  /**
   * How long `waitForLateResult` waits (`YIEM_STOPPED_WORKER_GRACE_MS`).
   * @defaultValue `DEFAULTS.stoppedWorkerGraceMs`
   */
  lateResultGraceMs?: number;
}

/**
 * Waits for tool jobs to finish (`waitForJobEnd`) with a low-latency wake-up: tool workers
 * announce each job's end on its queue's `toolEndsChannel` (`protocol/toolJobEnds.ts`), and one
 * subscriber connection here resolves the waiters as those arrive. Only ends travel there, where
 * a BullMQ `QueueEvents` reader was woken by every added, waiting, active and completed event of
 * the queue (three wake-ups and three reads a call). Each waiter also polls the job itself
 * (first after `firstPollMs`, then every `pollMs`), so a lost announcement (the subscriber
 * reconnecting), a job that had already finished before anyone waited (attach after a crash)
 * or a job no Yiem worker ends (failed by BullMQ itself) is still seen: the stored job is the
 * truth, or, once a completed job is removed, its finished marker. Before the first poll, a
 * job not yet taken gets its queue marked again (`wakeIfUntaken`), should its wake-up have
 * gone to a worker that died or stopped while blocked on the queue. Two waits on one job id
 * share it: both get its end (neither replaces the other).
 */
export class ResultWaiter {
  private readonly waiters = new Map<string, Waiter>();
  private readonly channels = new Map<string, Promise<void>>();
  private subscriber: RedisClient | undefined;
  private readonly timing: ResultWaiterTiming;

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: ClusterKeys,
    private readonly options: ResultWaiterOptions = {},
  ) {
    this.timing = options.timing ?? { firstPollMs: 250, pollMs: 1000 };
  }

  /**
   * For job `jobId` of tool queue `queue` that ended as "may have run" (its worker stopped answering): waits up to the
   * grace (`lateResultGraceMs`) for that worker's real result to land in the job's finished
   * marker (`awaitLateResult`). `undefined` when none came or `signal` aborted. Never throws.
   */
  waitForLateResult(
    queue: string,
    jobId: string,
    signal?: AbortSignal,
  ): Promise<ToolJobResult | undefined> {
    const graceMs = this.options.lateResultGraceMs ?? DEFAULTS.stoppedWorkerGraceMs;
    return awaitLateResult(this.connection, this.keys, { queue, jobId }, graceMs, signal);
  }

  /** Starts listening to the ends of `queue`'s jobs (idempotent); resolves once subscribed. */
  listen(queue: Queue): Promise<void> {
    const channel = this.keys.toolEndsChannel(queue.name);
    let subscribed = this.channels.get(channel);
    if (!subscribed) {
      subscribed = this.subscriberConnection()
        .subscribe(channel)
        .then(() => undefined);
      // A refused subscription is asked again by the next listen, not kept.
      subscribed.catch(() => this.channels.delete(channel));
      this.channels.set(channel, subscribed);
    }
    return subscribed;
  }

  /**
   * The subscriber connection: the process's shared one when given, else one of its own opened
   * on first use. Either resubscribes by itself after a reconnect.
   */
  private subscriberConnection(): RedisClient {
    if (this.subscriber) return this.subscriber;
    const subscriber = this.options.subscriber ?? duplicateConnection(this.connection);
    if (!this.options.subscriber) subscriber.on("error", () => undefined); // the polls cover the gap
    subscriber.on("message", (channel: string, text: string) => {
      if (!this.channels.has(channel)) return;
      const message = parseToolJobEnd(text);
      if (message) this.settle(message.jobId, message.end);
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  /**
   * Adds a job with `add` and resolves with how job `jobId` of `queue` ended: the one call a
   * caller makes. It registers before `add` runs (so no event is missed), polls the stored job
   * once `add` has returned, and stops waiting with `{ kind: "aborted" }` when `signal` aborts
   * (heard only after the add, so an abort never races it). A second wait for a job already
   * waited for joins the first: each gets the job's end, and an abort or a failed `add` ends
   * only its own wait. Forgets the job once no one waits for it. Rejects only when `add`
   * throws; `listen(queue)` must have run first.
   */
  async waitForJobEnd(
    queue: Queue,
    jobId: string,
    add: () => Promise<unknown>,
    signal?: AbortSignal,
  ): Promise<JobEnd> {
    let resolve: (end: JobEnd) => void = () => undefined;
    const ended = new Promise<JobEnd>((settle) => {
      resolve = settle;
    });
    this.join(queue, jobId, resolve);
    try {
      await add();
    } catch (err) {
      this.leave(jobId, resolve);
      throw err;
    }
    this.startPolling(jobId);
    const stopListening = signal
      ? onAbort(signal, () => {
          this.leave(jobId, resolve);
          resolve({ kind: "aborted" });
        })
      : undefined;
    try {
      return await ended;
    } finally {
      stopListening?.();
    }
  }

  /** Adds `resolve` to the waiters of job `jobId`, the first of them registering the job. */
  private join(queue: Queue, jobId: string, resolve: (end: JobEnd) => void): void {
    const waiter = this.waiters.get(jobId);
    if (waiter) waiter.resolves.add(resolve);
    else this.waiters.set(jobId, { queue, resolves: new Set([resolve]), timer: undefined });
  }

  /** Ends one wait for job `jobId`; the job is forgotten when it was the last. */
  private leave(jobId: string, resolve: (end: JobEnd) => void): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter?.resolves.delete(resolve) || waiter.resolves.size > 0) return;
    this.forget(jobId);
  }

  /** Starts the safety polls of a waiter whose job now exists, the take check first. */
  private startPolling(jobId: string): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter || waiter.timer) return;
    const { firstPollMs, takeCheckMs = TAKE_CHECK_MS } = this.timing;
    waiter.timer =
      takeCheckMs < firstPollMs
        ? setTimeout(() => this.checkTaken(jobId, firstPollMs - takeCheckMs), takeCheckMs)
        : setTimeout(() => this.poll(jobId), firstPollMs);
  }

  /** Marks the queue of a job still untaken again (`wakeIfUntaken`); polls `pollInMs` later. */
  private checkTaken(jobId: string, pollInMs: number): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    waiter.timer = setTimeout(() => this.poll(jobId), pollInMs);
    wakeIfUntaken(this.connection, waiter.queue, jobId).catch(() => undefined); // polled anyway
  }

  /** Stops waiting for a job. */
  private forget(jobId: string): void {
    const waiter = this.waiters.get(jobId);
    if (waiter?.timer) clearTimeout(waiter.timer);
    this.waiters.delete(jobId);
  }

  private settle(jobId: string, end: JobEnd): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    this.forget(jobId);
    for (const resolve of waiter.resolves) resolve(end);
  }

  private async poll(jobId: string): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    try {
      const end = await this.readEnd(waiter.queue, jobId);
      if (end) return this.settle(jobId, end);
    } catch {
      // Redis away: poll again later.
    }
    if (this.waiters.get(jobId) === waiter)
      waiter.timer = setTimeout(() => this.poll(jobId), this.timing.pollMs);
  }

  /**
   * How job `jobId` ended: as the stored job says, or, for a job that is gone, as its finished
   * marker does. A completed tool job is removed as it completes with
   * `YIEM_TOOL_JOB_RETENTION_S` 0 (else once its retention ran out), and its worker stores the
   * marker, with the result, ahead of completing the job; a job gone without a marker with a result (removed before it ran, cleaned from
   * the board after it failed) is `missing`.
   */
  private async readEnd(queue: Queue, jobId: string): Promise<JobEnd | undefined> {
    const end = await readJobEnd(queue, jobId);
    if (end?.kind !== "missing") return end;
    const done = parseToolDone(await this.connection.get(this.keys.toolDone(queue.name, jobId)));
    return done.finished && done.result ? { kind: "completed", value: done.result } : end;
  }

  /**
   * Ends every wait (`missing`) and stops listening: a shared subscriber leaves the channels, a
   * connection of its own is closed.
   */
  async close(): Promise<void> {
    for (const jobId of [...this.waiters.keys()]) this.settle(jobId, { kind: "missing" });
    const channels = [...this.channels.keys()];
    this.channels.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (!subscriber) return;
    if (this.options.subscriber) {
      if (channels.length > 0) await subscriber.unsubscribe(...channels).catch(() => undefined);
      return;
    }
    await subscriber.quit().catch(() => subscriber.disconnect());
  }
}

/** How a job ended according to Redis, or nothing while it is still waiting or running. */
export async function readJobEnd(queue: Queue, jobId: string): Promise<JobEnd | undefined> {
  const job = await Job.fromId<unknown, ToolJobResult>(queue, jobId);
  if (!job) return { kind: "missing" };
  if (job.finishedOn && job.failedReason) return { kind: "failed", reason: job.failedReason };
  if (job.finishedOn) return { kind: "completed", value: job.returnvalue };
  return undefined;
}
