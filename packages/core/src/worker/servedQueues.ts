import type { Worker } from "bullmq";
import type { Logger } from "../ops/logger.js";

/** How often a worker compares its tool store's `revision` with the one its queues follow. */
export const SERVED_QUEUES_CHECK_MS = 500;

/** What `createServedQueues` needs: the queues wanted now, and how to start and prepare one. */
export interface ServedQueuesOptions {
  /** The store's change counter (`ToolStore.revision`): nothing is recomputed while it stands still. */
  revision(): number;
  /** The tool queues to serve now. */
  wanted(): string[];
  /** Readies newly wanted queues before their workers start (their cluster-wide limits). */
  prepare(queues: string[]): Promise<void>;
  /** Starts the BullMQ workers (one per shard) of one queue. */
  start(queue: string): Worker[];
  log: Logger;
}

/**
 * The tool queues a worker serves, kept in line with its tool store: `sync()` opens the
 * workers of a queue that became wanted (a limited tool or one with its own queue that an
 * MCP server, a written tool or any store change added) and closes those of a queue no tool
 * needs any more. Closing lets that queue's running calls finish (BullMQ's graceful close, not
 * awaited by the next change, only by `close()`), so a call in flight keeps its result; calls
 * that arrive later wait in the queue for a worker that has the tool, instead of being taken
 * by one that would answer "not available".
 */
export interface ServedQueues {
  /** The queues served now. */
  queues(): string[];
  /** Every BullMQ worker open now. */
  workers(): Worker[];
  /** Follows the store once, if its revision changed; runs one at a time. */
  sync(): Promise<void>;
  /** Checks every `everyMs`; returns a stop function. */
  follow(everyMs?: number): () => void;
  /** Stops following and closes every worker (waiting for their running calls). */
  close(): Promise<void>;
}

/** Creates the served queues and starts the workers of the ones wanted now (see `ServedQueues`). */
export async function createServedQueues(options: ServedQueuesOptions): Promise<ServedQueues> {
  const open = new Map<string, Worker[]>();
  let revision = options.revision();
  let running: Promise<void> = Promise.resolve();
  let stopFollowing = () => {};
  const startQueues = async (queues: string[]) => {
    if (queues.length === 0) return;
    await options.prepare(queues);
    const started = queues.map((queue) => [queue, options.start(queue)] as const);
    for (const [queue, workers] of started) open.set(queue, workers);
    await Promise.all(started.flatMap(([, workers]) => workers.map((w) => w.waitUntilReady())));
  };
  const closing = new Set<Promise<void>>();
  /** Closes the queues' workers; the close is not awaited here, so a slow call blocks no other change. */
  const closeQueues = (queues: string[]) => {
    for (const queue of queues) {
      for (const worker of open.get(queue) ?? []) {
        const done = worker.close().catch((err: unknown) => {
          options.log.warn({ err: (err as Error).message, queue }, "could not close a tool queue");
        });
        closing.add(done);
        void done.then(() => closing.delete(done));
      }
      open.delete(queue);
    }
  };
  const followOnce = async () => {
    const now = options.revision();
    if (now === revision) return;
    revision = now;
    const wanted = new Set(options.wanted());
    const added = [...wanted].filter((queue) => !open.has(queue));
    const removed = [...open.keys()].filter((queue) => !wanted.has(queue));
    if (added.length === 0 && removed.length === 0) return;
    options.log.info({ added, removed }, "tool queues served changed");
    closeQueues(removed);
    await startQueues(added);
  };
  const sync = () => {
    running = running.then(followOnce).catch((err: unknown) => {
      revision = -1; // try again at the next check
      options.log.warn({ err: (err as Error).message }, "could not follow the tool store's queues");
    });
    return running;
  };
  await startQueues(options.wanted());
  return {
    queues: () => [...open.keys()],
    workers: () => [...open.values()].flat(),
    sync,
    follow(everyMs = SERVED_QUEUES_CHECK_MS) {
      const timer = setInterval(() => void sync(), everyMs);
      timer.unref();
      stopFollowing = () => clearInterval(timer);
      return stopFollowing;
    },
    async close() {
      stopFollowing();
      await running;
      closeQueues([...open.keys()]);
      await Promise.all(closing);
    },
  };
}
