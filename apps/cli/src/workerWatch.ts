import type { WorkerInfo } from "@yiem/core/client";

/** Options of `watchWorkers`. */
export interface WorkerWatchOptions {
  /** The live workers (the worker registry). */
  list(): Promise<WorkerInfo[]>;
  /** The workers running the calls shown; the registry is read only while there are some. */
  inUse(): string[];
  /** Told the ids of the live workers, and of those of them that drain, after each read. */
  report(live: ReadonlySet<string>, draining: ReadonlySet<string>): void;
  /** How often to look. Default 1000 ms. */
  intervalMs?: number;
}

/**
 * Reads the worker registry every second while calls run on known workers, so a worker that
 * drains (it says so in its announcement) or died mid-call is reported within seconds (its announcement expires after 6 s), long
 * before its job lock runs out and another worker takes the call over. A failed read is
 * skipped. Returns the function that stops it.
 *
 * @example const stop = watchWorkers({ list: () => client.workers(), inUse, report });
 */
export function watchWorkers(options: WorkerWatchOptions): () => void {
  const intervalMs = options.intervalMs ?? 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    if (options.inUse().length > 0) {
      const workers = await options.list().catch(() => undefined);
      if (workers && !stopped) {
        const draining = workers.filter((w) => w.draining === true);
        options.report(
          new Set(workers.map((w) => w.workerId)),
          new Set(draining.map((w) => w.workerId)),
        );
      }
    }
    if (!stopped) timer = setTimeout(look, intervalMs);
  };
  timer = setTimeout(look, intervalMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
