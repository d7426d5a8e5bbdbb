import type { Queue } from "bullmq";
import { Gauge, type Registry } from "prom-client";
import { withDeadline } from "../../ops/withDeadline.js";

/** The longest a scrape waits for fresh queue depths before serving the last ones. */
export const QUEUE_DEPTH_DEADLINE_MS = 500;

/** The states `yiem_queue_jobs` counts. */
const STATES = ["waiting", "prioritized", "active", "delayed", "failed", "completed"] as const;

/** The queue depth gauges and the read that refreshes them. */
export interface QueueDepths {
  /**
   * Reads every queue's job counts, waiting at most `deadlineMs` (500 ms): past it the gauges
   * keep their last values and `yiem_queue_jobs_age_seconds` grows. One read at a time: a
   * call while a read is still out (Redis down or slow) waits for that read instead of
   * queueing another. No queues (yet): nothing is read and the age keeps growing. Never rejects.
   */
  refresh(queues: Queue[]): Promise<void>;
}

/** Options of `createQueueDepths`. */
export interface QueueDepthsOptions {
  registry: Registry;
  /** Default `QUEUE_DEPTH_DEADLINE_MS`. */
  deadlineMs?: number;
}

/**
 * Registers `yiem_queue_jobs{queue,state}` and `yiem_queue_jobs_age_seconds` (seconds since
 * the depths were last read in full, counted from start until the first read) and returns
 * their refresher. Never reads Redis by itself: only `refresh` does.
 */
export function createQueueDepths(options: QueueDepthsOptions): QueueDepths {
  const deadlineMs = options.deadlineMs ?? QUEUE_DEPTH_DEADLINE_MS;
  let readAt = Date.now();
  let reading: Promise<void> | undefined;
  const depth = new Gauge({
    name: "yiem_queue_jobs",
    help: "Jobs per queue and state, as last read (see yiem_queue_jobs_age_seconds)",
    labelNames: ["queue", "state"],
    registers: [options.registry],
  });
  new Gauge({
    name: "yiem_queue_jobs_age_seconds",
    help: `Seconds since yiem_queue_jobs was last read from Redis (a scrape waits ${deadlineMs} ms for Redis, then serves the last values); counted from start before the first read`,
    registers: [options.registry],
    collect() {
      this.set((Date.now() - readAt) / 1000);
    },
  });
  const readAll = async (queues: Queue[]) => {
    const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...STATES)));
    counts.forEach((byState, i) => {
      const queue = queues[i]?.name ?? "";
      for (const [state, count] of Object.entries(byState)) depth.set({ queue, state }, count);
    });
    readAt = Date.now();
  };
  return {
    async refresh(queues) {
      if (queues.length === 0) return; // nothing to read yet (a coordinator still starting)
      reading ??= readAll(queues)
        .catch(() => undefined)
        .finally(() => {
          reading = undefined;
        });
      await withDeadline(reading, deadlineMs).catch(() => undefined);
    },
  };
}
