import type { Queue } from "bullmq";
import type { RedisClient } from "../redis/redisConnection.js";

/**
 * The BullMQ queues a client opens on its command connection, one per name, each opened once
 * the connection is ready (`ready`). BullMQ takes a connection that is not ready yet for one
 * it may use, and a queue that fails its first commands stays failed: a Redis Cluster
 * connection reports `connect` (nodes found, ready check pending) a moment before `ready`, and
 * with no offline queue a queue made then failed every later call. A queue that could not be
 * opened is forgotten, so the next call opens it again. BullMQ itself loads on first use.
 *
 * @example const coordinator = await queues.open("coordinator");
 */
export class ClientQueues {
  private readonly opened = new Map<string, Promise<Queue>>();

  constructor(
    private readonly connection: RedisClient,
    private readonly prefix: string,
    /** Resolves once `connection` is ready; rejects when it cannot be. */
    private readonly ready: () => Promise<void>,
  ) {}

  /** The queue `name`, ready for commands. Rejects when Redis cannot be reached. */
  open(name: string): Promise<Queue> {
    const known = this.opened.get(name);
    if (known) return known;
    const opening = this.openReady(name);
    this.opened.set(name, opening);
    opening.catch(() => {
      if (this.opened.get(name) === opening) this.opened.delete(name);
    });
    return opening;
  }

  /** Closes every queue opened. Never throws. */
  async close(): Promise<void> {
    const all = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(all.map((queue) => queue.then((q) => q.close()).catch(() => undefined)));
  }

  private async openReady(name: string): Promise<Queue> {
    await this.ready();
    const { Queue } = await import("bullmq");
    const queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
    queue.on("error", () => undefined); // each call reports its own failure
    try {
      await queue.waitUntilReady();
      return queue;
    } catch (err) {
      await queue.close().catch(() => undefined);
      throw err;
    }
  }
}
