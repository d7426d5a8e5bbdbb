/**
 * Yiem's lean take (`takeJob-8.lua`, through `SafeTakeWorker.takesLean`) against BullMQ's own
 * `moveToActive`, on a real Redis: a job taken either way leaves the same hash, lock, active
 * list, event stream and `QueueEvents` `active` event, and prioritized jobs come out in the
 * same order; but the queue's marker is added only while jobs still wait, and a take that
 * leaves none marks the worker drained, so a worker of two running one job takes once where
 * BullMQ's takes again and finds nothing, and the coordinator's intake takes a lone request
 * job once. Nothing is lost for it: jobs added while it runs one are taken at once, two jobs
 * added together wake two workers, a delayed job is taken when due though the take before it
 * left none waiting. A paused queue, a global concurrency or rate limit and a delayed job due
 * are left to BullMQ's take, and behave as with a plain BullMQ worker. The script runs on a
 * Redis Cluster too (a queue's keys share one slot).
 */
import { connectRedis, type RedisClient } from "@yiem/core";
import {
  addJobLean,
  DURABLE_CONNECTION,
  EagerWorker,
  RunSlots,
  SafeTakeWorker,
  silentLogger,
  startIntake,
} from "@yiem/core/internal";
import { redisSupportsCluster, startTestRedisCluster, type TestRedisCluster } from "@yiem/testing";
import { type ConnectionOptions, type Job, Queue, Worker, type WorkerOptions } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useBullQueues } from "../support/bullQueues.js";
import { type RawMonitor, startRawMonitor } from "../support/rawMonitor.js";

const bull = useBullQueues();

type Kind = "lean" | "bullmq";

/** A fresh queue with its events reader. */
const openQueue = () => bull.openQueue("take");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A worker of `queue` that takes only when asked (no processor): lean, or BullMQ's own. */
async function takingWorker(
  kind: Kind,
  queue: Queue,
  options: Partial<WorkerOptions> = {},
): Promise<Worker> {
  const settings = { connection: bull.connection, prefix: bull.bullPrefix, ...options };
  const worker =
    kind === "lean"
      ? new SafeTakeWorker(queue.name, undefined, settings)
      : new Worker(queue.name, undefined, settings);
  if (worker instanceof SafeTakeWorker) worker.takesLean = true;
  bull.opened.unshift(worker);
  await worker.waitUntilReady();
  return worker;
}

/** Takes the next job of `worker` without blocking, as the loop's take after a job does. */
const takeNext = (worker: Worker, token: string) =>
  worker.getNextJob(token, { block: false }) as Promise<Job | undefined>;

/** A key of `queue`. */
const keyOf = (queue: Queue, name: string) => `${bull.bullPrefix}:${queue.name}:${name}`;

/** The queue's event stream, each entry's fields without its id. */
async function eventsOf(queue: Queue): Promise<string[][]> {
  const entries = await bull.connection.xrange(keyOf(queue, "events"), "-", "+");
  return entries.map(([, fields]) => fields);
}

/**
 * How many takes of `queue` `monitor` saw: script calls whose first key is its wait list and
 * that moved a job or looked for one (`RPOPLPUSH`), without finishing one (a finish's `SREM`).
 */
function takesOf(monitor: RawMonitor, queue: Queue): number {
  const wait = keyOf(queue, "wait");
  const calls: string[][] = [];
  let current: string[] | undefined;
  for (const { source, args } of monitor.seen) {
    const command = args[0]?.toLowerCase() ?? "";
    if (source === "lua") current?.push(command);
    else if (command.startsWith("eval")) {
      current = args[3] === wait ? [] : undefined;
      if (current) calls.push(current);
    } else current = undefined;
  }
  return calls.filter((inner) => inner.includes("rpoplpush") && !inner.includes("srem")).length;
}

/** What a take of job `j1` (data, name) with a second job behind it leaves, read from Redis. */
async function takeOne(kind: Kind) {
  const { queue, events } = await openQueue();
  const active: Array<{ jobId: string; prev?: string }> = [];
  events.on("active", (event) => active.push(event));
  await queue.add("call", { n: 7 }, { jobId: "j1", attempts: 3 });
  await queue.add("call", { n: 8 }, { jobId: "j2" });
  const worker = await takingWorker(kind, queue, { name: "worker-a", lockDuration: 12_345 });
  await bull.connection.del(keyOf(queue, "marker")); // spent: as by a worker that woke on it
  const job = await takeNext(worker, "token-1");
  const hash = await bull.connection.hgetall(keyOf(queue, "j1"));
  const lockTtl = await bull.connection.pttl(keyOf(queue, "j1:lock"));
  await sleep(200); // QueueEvents reads the stream
  return {
    job: { id: job?.id, data: job?.data, token: job?.token, ats: job?.attemptsStarted },
    processedOn: job?.processedOn,
    hash: { ...hash, processedOn: "<now>", timestamp: "<added>" } as Record<string, string>,
    hashProcessedOn: Number(hash.processedOn),
    lock: await bull.connection.get(keyOf(queue, "j1:lock")),
    lockTtl,
    active: await bull.connection.lrange(keyOf(queue, "active"), 0, -1),
    wait: await bull.connection.lrange(keyOf(queue, "wait"), 0, -1),
    marker: await bull.connection.zrange(keyOf(queue, "marker"), 0, -1, "WITHSCORES"),
    events: (await eventsOf(queue)).filter((fields) => fields[1] === "active"),
    heard: active,
  };
}

describe("a job taken by Yiem's lean take", () => {
  it("is left as BullMQ's take leaves it: hash, lock, active list, events, QueueEvents", async () => {
    const bullmq = await takeOne("bullmq");
    const lean = await takeOne("lean");
    expect(lean.job).toEqual({ id: "j1", data: { n: 7 }, token: "token-1", ats: 1 });
    expect(lean.job).toEqual(bullmq.job);
    expect(lean.processedOn).toBe(lean.hashProcessedOn);
    expect(lean.hash).toEqual(bullmq.hash);
    expect(lean.hash.pb).toBe("worker-a");
    expect(lean.lock).toBe("token-1");
    expect(lean.lockTtl).toBeGreaterThan(12_000);
    expect(lean.lockTtl).toBeLessThanOrEqual(12_345);
    expect(lean.active).toEqual(bullmq.active);
    expect(lean.wait).toEqual(["j2"]);
    expect(lean.marker).toEqual(["0", "0"]); // a job still waits: announced again
    expect(lean.marker).toEqual(bullmq.marker);
    expect(lean.events).toEqual(bullmq.events);
    expect(lean.heard).toEqual([{ jobId: "j1", prev: "waiting" }]);
    expect(lean.heard).toEqual(bullmq.heard);
  });

  it("comes out in BullMQ's order among prioritized jobs, and an emptied queue looks the same", async () => {
    const run = async (kind: Kind) => {
      const { queue } = await openQueue();
      await queue.add("call", {}, { jobId: "p3", priority: 3 });
      await queue.add("call", {}, { jobId: "plain" });
      await queue.add("call", {}, { jobId: "p1", priority: 1 });
      await queue.add("call", {}, { jobId: "p3-later", priority: 3 });
      const worker = await takingWorker(kind, queue);
      const taken: Array<string | undefined> = [];
      for (let i = 0; i < 5; i++) taken.push((await takeNext(worker, `t${i}`))?.id);
      const ats = await bull.connection.hget(keyOf(queue, "p1"), "ats");
      const pc = await bull.connection.exists(keyOf(queue, "pc"));
      const prioritized = await bull.connection.exists(keyOf(queue, "prioritized"));
      return { taken, ats, pc, prioritized, active: await queue.getActiveCount() };
    };
    const bullmq = await run("bullmq");
    const lean = await run("lean");
    expect(lean.taken).toEqual(["plain", "p1", "p3", "p3-later", undefined]);
    expect(lean).toEqual(bullmq);
  });
});

/** How many takes a worker of `kind` (concurrency 2) runs for one job added while it blocks. */
async function takesForOneJob(kind: "eager" | "lean") {
  const { queue, events } = await openQueue();
  let markerAtStart = -1;
  const worker = new EagerWorker(
    queue.name,
    async () => {
      markerAtStart = await bull.connection.exists(keyOf(queue, "marker"));
      await sleep(300);
      return "done";
    },
    { connection: bull.connection, prefix: bull.bullPrefix, concurrency: 2, drainDelay: 60 },
  );
  worker.takesLean = kind === "lean";
  worker.fetchOnFinish = false; // as on a tool queue: the loop takes, not the finish
  bull.opened.unshift(worker);
  const drained = new Promise<void>((resolve) => worker.once("drained", () => resolve()));
  await drained; // blocking on the marker now
  await sleep(50);
  const monitor = await startRawMonitor(bull.redis.url);
  const job = await queue.add("call", {});
  await job.waitUntilFinished(events, 20_000);
  await sleep(200);
  monitor.stop();
  return { takes: takesOf(monitor, queue), markerAtStart };
}

describe("a worker that takes lean", () => {
  it("takes one job once, with no empty take after it and no marker left behind", async () => {
    expect((await takesForOneJob("eager")).takes).toBeGreaterThan(1); // BullMQ's take, then an empty one
    expect(await takesForOneJob("lean")).toEqual({ takes: 1, markerAtStart: 0 });
  });

  it("still takes at once a job added while it runs one", async () => {
    const { queue } = await openQueue();
    const started: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const worker = new EagerWorker(
      queue.name,
      async (job) => {
        started.push(job.id ?? "");
        if (job.id === "first") await gate;
        return job.id;
      },
      { connection: bull.connection, prefix: bull.bullPrefix, concurrency: 4, drainDelay: 60 },
    );
    bull.opened.unshift(worker);
    await new Promise<void>((resolve) => worker.once("drained", () => resolve()));
    await queue.add("call", {}, { jobId: "first" });
    await expect.poll(() => started, { timeout: 2_000 }).toEqual(["first"]);
    await sleep(100); // the worker blocks on the marker again
    for (const id of ["second", "third"]) {
      await queue.add("call", {}, { jobId: id });
      await expect.poll(() => started.at(-1), { timeout: 2_000 }).toBe(id);
    }
    release();
  });

  it("wakes a second worker for the second of two jobs added together", async () => {
    const { queue } = await openQueue();
    const running = new Set<string>();
    let together = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const startOne = async () => {
      const worker = new EagerWorker(
        queue.name,
        async (job) => {
          running.add(job.id ?? "");
          together = Math.max(together, running.size);
          await gate;
          return job.id;
        },
        { connection: bull.connection, prefix: bull.bullPrefix, concurrency: 1, drainDelay: 60 },
      );
      bull.opened.unshift(worker);
      await new Promise<void>((resolve) => worker.once("drained", () => resolve()));
    };
    await Promise.all([startOne(), startOne()]);
    await sleep(50);
    // One script adds both, with one marker (BullMQ's addBulk runs a script, and a marker, each).
    await Promise.all(["a", "b"].map((jobId) => addJobLean(queue, "call", {}, { jobId })));
    await expect.poll(() => together, { timeout: 2_000 }).toBe(2);
    release();
  });

  it("takes a delayed job when due, though the take before it left no job waiting", async () => {
    const { queue, events } = await openQueue();
    const startedAt = new Map<string, number>();
    const worker = new EagerWorker(
      queue.name,
      async (job) => {
        startedAt.set(job.id ?? "", Date.now());
        return job.id;
      },
      { connection: bull.connection, prefix: bull.bullPrefix, concurrency: 4, drainDelay: 60 },
    );
    bull.opened.unshift(worker);
    await new Promise<void>((resolve) => worker.once("drained", () => resolve()));
    const dueAt = Date.now() + 1_000;
    const delayed = await queue.add("call", {}, { jobId: "later", delay: 1_000 });
    await sleep(200); // the worker woke for the delayed job's marker, and waits for its time
    await (await queue.add("call", {}, { jobId: "now" })).waitUntilFinished(events, 5_000);
    await delayed.waitUntilFinished(events, 5_000);
    expect(startedAt.get("later")).toBeLessThan(dueAt + 1_000); // not after the minute's block
  });

  it("lets the coordinator's intake take a lone job once: no burst behind it, no marker to wake on", async () => {
    const { queue } = await openQueue();
    const worker = (await takingWorker("lean", queue, { drainDelay: 2 })) as SafeTakeWorker<
      unknown,
      unknown
    >;
    const handled: string[] = [];
    const drained = new Promise<void>((resolve) => worker.once("drained", () => resolve()));
    const intake = startIntake({
      worker,
      slots: new RunSlots(4),
      log: silentLogger,
      token: () => `token-${handled.length}`,
      handle: async (job, _token, slot) => {
        handled.push(job.id ?? "");
        slot.release();
      },
      jobsLeft: () => worker.jobsLeft,
    });
    bull.opened.unshift({ close: () => intake.stop() });
    await drained;
    await sleep(50);
    const monitor = await startRawMonitor(bull.redis.url);
    await queue.add("ask", {}, { jobId: "request-1" });
    await expect.poll(() => handled, { timeout: 2_000 }).toEqual(["request-1"]);
    await sleep(300);
    monitor.stop();
    expect(takesOf(monitor, queue)).toBe(1);
  });
});

/** A lean worker that takes up to three jobs a take, and only when asked (no processor). */
class TakeThreeWorker extends SafeTakeWorker<unknown, unknown> {
  protected override takeCount(): number {
    return 3;
  }
}

/** A gate the processors of a test wait on, opened once. */
function openableGate(): { wait: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/**
 * Eager workers of `queue` (concurrency `concurrency` each, taking up to 4 jobs at once), blocked
 * on its marker, whose jobs wait on `gate`: `ranBy` says which worker (by index) started each job.
 */
async function blockedWorkers(
  queue: Queue,
  count: number,
  concurrency: number,
  gate: Promise<void>,
) {
  const ranBy = new Map<string, number>();
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const worker = new EagerWorker(
        queue.name,
        async (job) => {
          ranBy.set(job.id ?? "", index);
          await gate;
          return job.id;
        },
        { connection: bull.connection, prefix: bull.bullPrefix, concurrency, drainDelay: 60 },
      );
      worker.takeAtOnce = 4; // as a tool worker's, by default (WORKER_TAKE_AT_ONCE)
      bull.opened.unshift(worker);
      await new Promise<void>((resolve) => worker.once("drained", () => resolve()));
    }),
  );
  await sleep(50); // each blocks on the marker now
  return ranBy;
}

describe("a worker that takes several jobs at once", () => {
  it("takes a model turn's two calls in one take, on one worker, and wakes no other", async () => {
    const { queue } = await openQueue();
    const gate = openableGate();
    const ranBy = await blockedWorkers(queue, 2, 4, gate.wait);
    const monitor = await startRawMonitor(bull.redis.url);
    // One script adds both, with one marker: what a coordinator does with a turn's calls.
    await Promise.all(["a", "b"].map((jobId) => addJobLean(queue, "call", {}, { jobId })));
    await expect.poll(() => ranBy.size, { timeout: 2_000 }).toBe(2);
    await sleep(200);
    monitor.stop();
    gate.open();
    expect(ranBy.get("a")).toBe(ranBy.get("b"));
    expect(takesOf(monitor, queue)).toBe(1);
  });

  it("takes no more jobs than it has free slots for: the rest wait for other workers", async () => {
    const { queue } = await openQueue();
    const gate = openableGate();
    const ranBy = await blockedWorkers(queue, 1, 2, gate.wait);
    await Promise.all(
      ["a", "b", "c", "d"].map((jobId) => addJobLean(queue, "call", {}, { jobId })),
    );
    await expect.poll(() => ranBy.size, { timeout: 2_000 }).toBe(2);
    await sleep(200);
    const counts = await queue.getJobCounts("wait", "active");
    gate.open();
    expect([...ranBy.keys()]).toEqual(["a", "b"]);
    expect(counts).toEqual({ wait: 2, active: 2 });
  });

  it("locks each job it took ahead with its own token, hands it out without asking Redis, and hands back the rest as it closes", async () => {
    const { queue } = await openQueue();
    await Promise.all(
      ["j1", "j2", "j3", "j4"].map((jobId) => addJobLean(queue, "call", {}, { jobId })),
    );
    const worker = new TakeThreeWorker(queue.name, undefined, {
      connection: bull.connection,
      prefix: bull.bullPrefix,
    });
    worker.takesLean = true;
    await worker.waitUntilReady();
    const first = await takeNext(worker, "token-1");
    const locks = await Promise.all(
      ["j1", "j2", "j3"].map((id) => bull.connection.get(keyOf(queue, `${id}:lock`))),
    );
    const monitor = await startRawMonitor(bull.redis.url);
    const second = await takeNext(worker, "token-2");
    await sleep(100);
    monitor.stop();
    await worker.close();
    expect([first?.id, first?.token, second?.id, second?.token]).toEqual([
      "j1",
      "token-1",
      "j2",
      "token-1/1",
    ]);
    expect(locks).toEqual(["token-1", "token-1/1", "token-1/2"]);
    expect(takesOf(monitor, queue)).toBe(0);
    // j3, taken ahead and never started, is back in wait (its lock gone); j1 and j2 stay active.
    expect((await bull.connection.lrange(keyOf(queue, "wait"), 0, -1)).sort()).toEqual([
      "j3",
      "j4",
    ]);
    expect((await bull.connection.lrange(keyOf(queue, "active"), 0, -1)).sort()).toEqual([
      "j1",
      "j2",
    ]);
    expect(await bull.connection.exists(keyOf(queue, "j3:lock"))).toBe(0);
    const again = await takingWorker("lean", queue);
    const retaken = [(await takeNext(again, "t1"))?.id, (await takeNext(again, "t2"))?.id];
    expect(retaken.sort()).toEqual(["j3", "j4"]);
  });

  it("hands back the jobs it took ahead as it pauses: none waits out the pause under its lock", async () => {
    const { queue } = await openQueue();
    await Promise.all(["p1", "p2", "p3"].map((jobId) => addJobLean(queue, "call", {}, { jobId })));
    const worker = new TakeThreeWorker(queue.name, undefined, {
      connection: bull.connection,
      prefix: bull.bullPrefix,
    });
    worker.takesLean = true;
    bull.opened.unshift(worker);
    await worker.waitUntilReady();
    expect((await takeNext(worker, "token-1"))?.id).toBe("p1");
    await worker.pause(true);
    expect((await bull.connection.lrange(keyOf(queue, "wait"), 0, -1)).sort()).toEqual([
      "p2",
      "p3",
    ]);
    expect(await bull.connection.lrange(keyOf(queue, "active"), 0, -1)).toEqual(["p1"]);
  });
});

describe("a queue that is not plain", () => {
  /** Runs `scenario` with a lean worker and with BullMQ's; both must see the same. */
  async function sameAsBullmq<T>(
    scenario: (queue: Queue, worker: Worker) => Promise<T>,
    options: Partial<WorkerOptions> = {},
  ): Promise<T> {
    const seen: T[] = [];
    for (const kind of ["bullmq", "lean"] as const) {
      const { queue } = await openQueue();
      seen.push(await scenario(queue, await takingWorker(kind, queue, options)));
    }
    expect(seen[1]).toEqual(seen[0]);
    return seen[1] as T;
  }

  it("a delayed job due is promoted and taken, as BullMQ's take does", async () => {
    const seen = await sameAsBullmq(async (queue, worker) => {
      await queue.add("call", {}, { jobId: "d1", delay: 20 });
      await sleep(60);
      const job = await takeNext(worker, "t1");
      const moves = (await eventsOf(queue)).filter((fields) => fields.includes("prev"));
      return { taken: job?.id, events: moves.map((fields) => `${fields[1]}:${fields.at(-1)}`) };
    });
    expect(seen).toEqual({ taken: "d1", events: ["waiting:delayed", "active:waiting"] });
  });

  it("a paused queue gives nothing, and its job once resumed", async () => {
    const seen = await sameAsBullmq(async (queue, worker) => {
      await queue.pause();
      await queue.add("call", {}, { jobId: "p1" });
      const whilePaused = (await takeNext(worker, "t1"))?.id ?? null;
      const counts = await queue.getJobCounts("paused", "wait", "active");
      await queue.resume();
      return { whilePaused, counts, resumed: (await takeNext(worker, "t2"))?.id };
    });
    expect(seen.resumed).toBe("p1");
  });

  it("a global concurrency holds the second job back", async () => {
    const seen = await sameAsBullmq(async (queue, worker) => {
      await queue.setGlobalConcurrency(1);
      await queue.addBulk([
        { name: "call", data: {}, opts: { jobId: "c1" } },
        { name: "call", data: {}, opts: { jobId: "c2" } },
      ]);
      const first = (await takeNext(worker, "t1"))?.id;
      const second = (await takeNext(worker, "t2"))?.id ?? null;
      const marker = await bull.connection.exists(keyOf(queue, "marker"));
      return { first, second, marker, waiting: await queue.getWaitingCount() };
    });
    expect(seen).toMatchObject({ first: "c1", second: null, waiting: 1 });
  });

  it("a global rate limit holds the second job back", async () => {
    const seen = await sameAsBullmq(async (queue, worker) => {
      await queue.setGlobalRateLimit(1, 10_000);
      await queue.addBulk([
        { name: "call", data: {}, opts: { jobId: "r1" } },
        { name: "call", data: {}, opts: { jobId: "r2" } },
      ]);
      const first = (await takeNext(worker, "t1"))?.id;
      const second = (await takeNext(worker, "t2"))?.id ?? null;
      return { first, second, limited: (await bull.connection.get(keyOf(queue, "limiter"))) ?? "" };
    });
    expect(seen).toEqual({ first: "r1", second: null, limited: "1" });
  });

  it("a worker's own limiter is BullMQ's to keep", async () => {
    const seen = await sameAsBullmq(
      async (queue, worker) => {
        await queue.addBulk([
          { name: "call", data: {}, opts: { jobId: "w1" } },
          { name: "call", data: {}, opts: { jobId: "w2" } },
        ]);
        const first = (await takeNext(worker, "t1"))?.id;
        return { first, second: (await takeNext(worker, "t2"))?.id ?? null };
      },
      { limiter: { max: 1, duration: 10_000 } },
    );
    expect(seen).toEqual({ first: "w1", second: null });
  });
});

describe.skipIf(!redisSupportsCluster())("a lean take on a Redis Cluster", () => {
  let cluster: TestRedisCluster | undefined;
  let connection: RedisClient | undefined;

  beforeAll(async () => {
    cluster = await startTestRedisCluster();
    connection = connectRedis({ clusterNodes: cluster.nodes }, DURABLE_CONNECTION);
    await connection.ping();
  }, 60_000);

  afterAll(async () => {
    connection?.disconnect();
    await cluster?.stop();
  });

  it("takes each job once, in order, and says when none is left", async () => {
    const settings = {
      connection: connection as unknown as ConnectionOptions,
      prefix: `${cluster?.prefix}:bull`,
    };
    const queue = new Queue("{take-cluster}", settings);
    const worker = new SafeTakeWorker(queue.name, undefined, { ...settings, name: "w" });
    worker.takesLean = true;
    try {
      await queue.addBulk(
        ["c1", "c2"].map((jobId) => ({ name: "call", data: {}, opts: { jobId } })),
      );
      const seen: Array<[string | undefined, boolean | undefined]> = [];
      for (let i = 0; i < 3; i++) {
        const job = await takeNext(worker, `t${i}`);
        seen.push([job?.id, worker.jobsLeft]);
      }
      expect(seen).toEqual([
        ["c1", true],
        ["c2", false],
        [undefined, false],
      ]);
      expect((await queue.getJob("c2"))?.processedOn).toBeGreaterThan(0);
    } finally {
      await worker.close();
      await queue.close();
    }
  });
});
