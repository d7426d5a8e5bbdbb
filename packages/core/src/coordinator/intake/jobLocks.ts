import type { Worker } from "bullmq";
import type { Logger } from "../../ops/logger.js";

/** How soon a failed renewal is tried again. */
const RETRY_MS = 250;

/**
 * Keeps the BullMQ locks of the coordinator-queue jobs this coordinator holds: every half
 * lock duration, one call extends all of them. A job whose lock could not be extended was
 * taken back by BullMQ (this process looked dead for a lock duration) and is someone else's
 * now: it is forgotten and `onLost` (given to `start`) is told its id. A failed renewal (Redis
 * away, a Redis Cluster failing over) is retried every `RETRY_MS` until one goes through:
 * waiting for the next tick would let every lock expire after a single failed call. A job
 * costs one map entry (its id and token): a coordinator may hold ten thousand runs parked for
 * approval for days.
 */
export class JobLocks {
  /** The token of each job held, by job id. */
  private readonly tracked = new Map<string, string>();
  private onLost: (jobId: string) => void = () => undefined;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly worker: Worker,
    private readonly lockDurationMs: number,
    private readonly log: Logger,
  ) {}

  /** Starts renewing; `onLost` is told each job whose lock was taken back. */
  start(onLost: (jobId: string) => void): void {
    this.onLost = onLost;
    this.timer = setInterval(() => void this.renew(), Math.max(100, this.lockDurationMs / 2));
  }

  /** Keeps job `jobId`'s lock (fetched with `token`) until `untrack`. */
  track(jobId: string, token: string): void {
    this.tracked.set(jobId, token);
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
    if (this.tracked.size === 0) return;
    const jobIds = [...this.tracked.keys()];
    const tokens = [...this.tracked.values()];
    try {
      const lost = await this.worker.extendJobLocks(jobIds, tokens, this.lockDurationMs);
      if (lost.length === 0) return;
      const renewedWith = new Map(jobIds.map((jobId, i) => [jobId, tokens[i]]));
      for (const jobId of lost) this.markLost(jobId, renewedWith.get(jobId));
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

  /** Forgets a job whose lock was lost, unless it was fetched again since (another token). */
  private markLost(jobId: string, token: string | undefined): void {
    if (token === undefined || this.tracked.get(jobId) !== token) return;
    this.tracked.delete(jobId);
    this.log.warn({ jobId }, "lost the lock of a coordinator job; another coordinator has it");
    this.onLost(jobId);
  }
}
