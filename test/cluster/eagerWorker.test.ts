/**
 * `EagerWorker`, the BullMQ worker of the tool queues, against a real Redis: a job taken by an
 * idle worker starts before the worker asks Redis for another (a plain BullMQ `Worker` of
 * concurrency above one first waits for that empty take), and the change loses nothing: a
 * job announced by its marker while the worker blocks is taken at once, a backlog runs each job
 * once within the concurrency, a job put back with a delay runs again, concurrency 1 works;
 * told so (a tool queue without a global concurrency), finishing a job fetches no next one.
 */
import { connectRedis } from "@yiem/core";
import { DURABLE_CONNECTION, EagerWorker } from "@yiem/core/internal";
import { DelayedError, type Job, type Queue, Worker, type WorkerOptions } from "bullmq";
import { describe, expect, it } from "vitest";
import { useBullQueues } from "../support/bullQueues.js";
import { openMonitor } from "../support/redisConnection.js";

const bull = useBullQueues();

/** What the test jobs carry. */
interface Data {
  n: number;
}
type Processor = (job: Job<Data>) => Promise<unknown>;
type WorkerClass = new (name: string, processor: Processor, options: WorkerOptions) => Worker<Data>;

/** A fresh queue with its events reader. */
const openQueue = () => bull.openQueue("eager");

/**
 * A worker of `kind` on `queue` (a minute of block timeout: a job left waiting after its marker
 * was spent would sit out the test's timeout), resolved once it has found the queue empty.
 */
async function startWorker(
  kind: WorkerClass,
  queue: Queue,
  processor: Processor,
  concurrency: number,
): Promise<Worker> {
  const worker = new kind(queue.name, processor, {
    connection: bull.connection,
    prefix: bull.bullPrefix,
    concurrency,
    drainDelay: 60,
  });
  bull.opened.unshift(worker); // closed before its queue
  const drained = new Promise<void>((resolve) => worker.once("drained", () => resolve()));
  await worker.waitUntilReady();
  await drained;
  return worker;
}

/**
 * Adds a backlog of eight jobs, then starts a worker of `kind` (concurrency 4) on a connection
 * of its own, whose processor sends a PING on that connection as it starts; returns how many
 * of the worker's takes (BullMQ's moveToActive script) Redis ran from that connection before the
 * first PING, read with MONITOR. A plain `Worker` takes a job per round trip until it holds four before it starts
 * the first.
 */
async function takesBeforeFirstStart(kind: WorkerClass): Promise<number> {
  const { queue, events } = await openQueue();
  const own = connectRedis(bull.redis.url, DURABLE_CONNECTION);
  bull.opened.push({ close: async () => own.disconnect() });
  const address = /addr=(\S+)/.exec(String(await own.client("INFO")))?.[1];
  const seen: Array<{ source: string; command: string }> = [];
  const monitor = await openMonitor(bull.redis.url);
  bull.opened.push({ close: async () => monitor.disconnect() });
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    const command = String(args[0]).toLowerCase();
    // A take is BullMQ's moveToActive script, whose first key is the queue's wait list.
    const take = command.startsWith("eval") && String(args[3]).endsWith(":wait");
    seen.push({ source, command: take ? "take" : command });
  });
  const jobs = await queue.addBulk(
    Array.from({ length: 8 }, (_, n) => ({ name: "call", data: { n } })),
  );
  const worker = new kind(
    queue.name,
    async (job: Job<Data>) => {
      void own.ping(`started ${job.id}`); // sent before anything else the job does
      await new Promise((resolve) => setTimeout(resolve, 20));
      return job.data.n;
    },
    { connection: own, prefix: bull.bullPrefix, concurrency: 4, drainDelay: 60 },
  );
  bull.opened.unshift(worker);
  await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 20_000)));
  const fromWorker = seen.filter((entry) => entry.source === address);
  const firstStart = fromWorker.findIndex((entry) => entry.command === "ping");
  expect(firstStart).toBeGreaterThan(0);
  return fromWorker.slice(0, firstStart).filter((entry) => entry.command === "take").length;
}

describe("EagerWorker", () => {
  it("starts the first job of a backlog before taking the next (a plain Worker first takes as many as its concurrency)", async () => {
    expect(await takesBeforeFirstStart(Worker)).toBe(4);
    expect(await takesBeforeFirstStart(EagerWorker)).toBe(1);
  });

  it("runs every job of a backlog once, never more at once than its concurrency", async () => {
    const { queue, events } = await openQueue();
    const runs = new Map<string, number>();
    let running = 0;
    let most = 0;
    await startWorker(
      EagerWorker,
      queue,
      async (job) => {
        runs.set(job.id ?? "", (runs.get(job.id ?? "") ?? 0) + 1);
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return job.data.n;
      },
      4,
    );
    const jobs = await queue.addBulk(
      Array.from({ length: 40 }, (_, n) => ({ name: "call", data: { n } })),
    );
    const values = await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 20_000)));
    expect(values).toEqual(Array.from({ length: 40 }, (_, n) => n));
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(runs.size).toBe(40);
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThan(1);
  });

  it("takes jobs added one by one while it blocks for a marker, at concurrency 1 too", async () => {
    for (const concurrency of [1, 16]) {
      const { queue, events } = await openQueue();
      await startWorker(EagerWorker, queue, async (job) => job.data.n * 2, concurrency);
      for (let n = 0; n < 5; n++) {
        await new Promise((resolve) => setTimeout(resolve, 20)); // idle: blocking again
        const job = await queue.add("call", { n });
        await expect(job.waitUntilFinished(events, 20_000)).resolves.toBe(n * 2);
      }
    }
  });

  it("takes no next job as it finishes one when told so: an idle queue costs no take inside the finish", async () => {
    const { queue, events } = await openQueue();
    const worker = await startWorker(EagerWorker, queue, async (job) => job.data.n, 16);
    (worker as EagerWorker<Data, unknown>).fetchOnFinish = false; // a tool queue without a limit
    const inner: string[][] = [];
    const monitor = await openMonitor(bull.redis.url);
    bull.opened.push({ close: async () => monitor.disconnect() });
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      const command = String(args[0]).toLowerCase();
      if (command === "evalsha" || command === "eval") inner.push([]);
      else if (source === "lua") inner.at(-1)?.push(command);
    });
    for (let n = 0; n < 3; n++) {
      const job = await queue.add("call", { n });
      await expect(job.waitUntilFinished(events, 20_000)).resolves.toBe(n);
    }
    await new Promise((resolve) => setTimeout(resolve, 100)); // MONITOR's last lines
    // A finish releases the job's stalled mark with its lock (BullMQ's script or Yiem's).
    const finishes = inner.filter((commands) => commands.includes("srem"));
    expect(finishes).toHaveLength(3);
    for (const commands of finishes) {
      expect(commands).not.toContain("rpoplpush"); // BullMQ's fetch of the next job
    }
  });

  it("runs a job again that its processor put back with a delay", async () => {
    const { queue, events } = await openQueue();
    let attempts = 0;
    await startWorker(
      EagerWorker,
      queue,
      async (job) => {
        attempts++;
        if (attempts === 1) {
          await job.moveToDelayed(Date.now() + 100, job.token);
          throw new DelayedError();
        }
        return "second";
      },
      8,
    );
    const job = await queue.add("call", {});
    await expect(job.waitUntilFinished(events, 20_000)).resolves.toBe("second");
    expect(attempts).toBe(2);
  });
});
