import { Job, type Queue, QueueEvents } from "bullmq";
import type { RedisClient } from "../redis/redisConnection.js";
import type { ToolJobResult } from "./toolJobs.js";

/** How a tool job ended, as the coordinator sees it. */
export type JobEnd =
  | { kind: "completed"; value: ToolJobResult }
  | { kind: "failed"; reason: string }
  | { kind: "missing" };

interface Waiter {
  queue: Queue;
  resolve: (end: JobEnd) => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Waits for tool jobs to finish with a low-latency wake-up: one `QueueEvents` reader per tool
 * queue resolves waiters as `completed` / `failed` events arrive. Each waiter also polls the
 * job itself (first after `firstPollMs`, then every `pollMs`), so a missed event or a job that
 * had already finished before anyone waited (attach after a crash) is still seen: the stored
 * job is the truth. Never rejects.
 */
export class ResultWaiter {
  private readonly waiters = new Map<string, Waiter>();
  private readonly readers = new Map<string, QueueEvents>();

  constructor(
    private readonly connection: RedisClient,
    private readonly bullPrefix: string,
    private readonly timing = { firstPollMs: 250, pollMs: 1000 },
  ) {}

  /** Starts listening to `queue` (idempotent); resolves once its reader is connected. */
  async listen(queue: Queue): Promise<void> {
    if (this.readers.has(queue.name)) return;
    const reader = new QueueEvents(queue.name, {
      connection: this.connection, // QueueEvents makes its own blocking duplicate
      prefix: this.bullPrefix,
    });
    this.readers.set(queue.name, reader);
    reader.on("completed", ({ jobId, returnvalue }) => {
      this.settle(jobId, { kind: "completed", value: returnvalue as unknown as ToolJobResult });
    });
    reader.on("failed", ({ jobId, failedReason }) =>
      this.settle(jobId, { kind: "failed", reason: failedReason }),
    );
    reader.on("error", () => undefined); // reconnects by itself; the polls cover the gap
    await reader.waitUntilReady();
  }

  /**
   * Resolves when job `jobId` of `queue` ends. Call it before adding the job (so no event is
   * missed), then `startPolling` once the job exists.
   */
  wait(queue: Queue, jobId: string): Promise<JobEnd> {
    return new Promise((resolve) => {
      this.waiters.set(jobId, { queue, resolve, timer: undefined });
    });
  }

  /** Starts the safety polls of a waiter whose job now exists. */
  startPolling(jobId: string): void {
    const waiter = this.waiters.get(jobId);
    if (waiter && !waiter.timer)
      waiter.timer = setTimeout(() => this.poll(jobId), this.timing.firstPollMs);
  }

  /** Stops waiting for a job (its caller gave up). */
  forget(jobId: string): void {
    const waiter = this.waiters.get(jobId);
    if (waiter?.timer) clearTimeout(waiter.timer);
    this.waiters.delete(jobId);
  }

  private settle(jobId: string, end: JobEnd): void {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    this.forget(jobId);
    waiter.resolve(end);
  }

  private async poll(jobId: string): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    try {
      const end = await readJobEnd(waiter.queue, jobId);
      if (end) return this.settle(jobId, end);
    } catch {
      // Redis away: poll again later.
    }
    if (this.waiters.get(jobId) === waiter)
      waiter.timer = setTimeout(() => this.poll(jobId), this.timing.pollMs);
  }

  /** Closes every reader. */
  async close(): Promise<void> {
    for (const jobId of [...this.waiters.keys()]) this.settle(jobId, { kind: "missing" });
    await Promise.all([...this.readers.values()].map((reader) => reader.close()));
    this.readers.clear();
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
