import { logMessage, type TestProcess } from "@yiem/testing";
import { sourceCommand, spawnCommand } from "../../test/support/processes.js";

/** How long a worker process may take to start (long: the machine may be busy with other work). */
const START_TIMEOUT_MS = 90_000;

/** Which worker a benchmark process runs: Yiem's `startToolWorker` or a plain BullMQ worker. */
export type WorkerKind = "yiem" | "raw";

/** The benchmark's worker processes. */
export interface WorkerPool {
  /** Starts one more worker process of `kind` (with `env` on top); resolves once it listens. */
  add(kind: WorkerKind, env?: Record<string, string>): Promise<TestProcess>;
  /** Process ids of the running workers of `kind`. */
  pids(kind: WorkerKind): number[];
  /** Stops every worker (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
}

/**
 * The benchmark's worker, from its sources (node + tsx): it is no app, so it has no compiled
 * entry point (`appCommand` refuses it), and the Yiem it starts is the packages' sources.
 */
const BENCH_WORKER = sourceCommand("bench/workers/benchWorker.ts");

/** Worker processes (`BENCH_WORKER`) against Redis at `url` under `prefix`. */
export function workerPool(url: string, prefix: string): WorkerPool {
  const started: Array<{ kind: WorkerKind; process: TestProcess }> = [];
  return {
    async add(kind, env = {}) {
      const workerId = `bench-${kind}-${started.filter((w) => w.kind === kind).length + 1}`;
      const child = spawnCommand(BENCH_WORKER, {
        BENCH_WORKER_KIND: kind,
        BENCH_WORKER_ID: workerId,
        REDIS_URL: url,
        YIEM_PREFIX: prefix,
        ...env,
      });
      started.push({ kind, process: child });
      await child.waitForLine(logMessage("bench worker ready"), START_TIMEOUT_MS);
      return child;
    },
    pids: (kind) => started.filter((w) => w.kind === kind).map((w) => w.process.pid),
    async stop() {
      await Promise.all(started.map((w) => w.process.stop(3000)));
    },
  };
}
