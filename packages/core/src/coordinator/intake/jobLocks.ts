import type { Worker } from "bullmq";
import type { Logger } from "../../ops/logger.js";

/** How soon a failed renewal is tried again. */
const RETRY_MS = 250;

interface Tracked {
  token: string;
  onLost: () => void;
}

/**
 * Keeps the BullMQ locks of the coordinator-queue jobs this coordinator holds: every half
 * lock duration, one call extends all of them. A job whose lock could not be extended was
 * taken back by BullMQ (this process looked dead for a lock duration) and is someone else's
 * now: its `onLost` runs and it is forgotten. A failed renewal (Redis away, a Redis Cluster
 * failing over) is retried every `RETRY_MS` until one goes through: waiting for the next tick
 * would let every lock expire after a single failed call.
 */
export class JobLocks {
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly worker: Worker,
    private readonly lockDurationMs: number,
    private readonly log: Logger,
  ) {}

  /** Starts renewing. */
  start(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(100, this.lockDurationMs / 2));
  }

  /** Keeps job `jobId`'s lock (fetched with `token`) until `untrack`. */
  track(jobId: string, token: string, onLost: () => void): void {
    this.tracked.set(jobId, { token, onLost });
  }

  /** Stops keeping a job's lock (it was completed, failed or handed back). */
  untrack(jobId: string): void {
    this.tracked.delete(jobId);
  }

  /** Jobs held now. */
  get size(): number {
    return this.tracked.size;
  }

  /** Stops renewing. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
  }

  private async renew(): Promise<void> {
    const entries = [...this.tracked];
    if (entries.length === 0) return;
    try {
      const lost = await this.worker.extendJobLocks(
        entries.map(([jobId]) => jobId),
        entries.map(([, t]) => t.token),
        this.lockDurationMs,
      );
      for (const jobId of lost) this.markLost(jobId, entries);
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, "could not renew job locks; retrying");
      this.retrySoon();
    }
  }

  private retrySoon(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.renew();
    }, RETRY_MS);
  }

  private markLost(jobId: string, entries: Array<[string, Tracked]>): void {
    const entry = entries.find(([id]) => id === jobId)?.[1];
    if (!entry || this.tracked.get(jobId) !== entry) return;
    this.tracked.delete(jobId);
    this.log.warn({ jobId }, "lost the lock of a coordinator job; another coordinator has it");
    entry.onLost();
  }
}
