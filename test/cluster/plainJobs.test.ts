/**
 * Yiem's lean add of plain jobs (`addJobLean`, `addPlainJobs.lua`) against BullMQ's own
 * `queue.add`, through BullMQ's public API, on a single Redis and on a Redis Cluster: the job
 * hash is field for field what BullMQ stores (but the id and the timestamp), the job reads back
 * the same, counts and states agree, a plain BullMQ `Worker` takes and completes it, a
 * `QueueEvents` hears `waiting`, a worker blocked on the queue's marker wakes for it, a paused
 * queue gets it in paused, and an id that exists is left as it is. Options or queues it does
 * not handle go to BullMQ. The adds issued to one queue in one pass go out in one script call
 * (seen by `MONITOR`), each job stored as `queue.add` stores it. Fails when BullMQ's layout
 * differs from the script's.
 */
import { connectRedis, type RedisClient } from "@yiem/core";
import {
  addJobLean,
  DURABLE_CONNECTION,
  JOB_RETENTION,
  toolJobRetention,
} from "@yiem/core/internal";
import {
  redisSupportsCluster,
  startTestRedis,
  startTestRedisCluster,
  type TestRedis,
  type TestRedisCluster,
} from "@yiem/testing";
import {
  type ConnectionOptions,
  type Job,
  type JobsOptions,
  Queue,
  QueueEvents,
  Worker,
} from "bullmq";
import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRawMonitor } from "../support/rawMonitor.js";

/** Where a mode's queues live. */
interface Place {
  connection: RedisClient;
  prefix: string;
  /** The URL of each Redis server (every node of a cluster), for `MONITOR`. */
  urls: string[];
  /** A fresh queue name (hash-tagged on a cluster, so its keys share a slot). */
  queueName(): string;
  stop(): Promise<void>;
}

let counter = 0;

async function singleRedis(): Promise<Place> {
  const server: TestRedis = await startTestRedis();
  const connection = connectRedis(server.url, DURABLE_CONNECTION);
  return {
    connection,
    prefix: `${server.prefix}:bull`,
    urls: [server.url],
    queueName: () => `plain-${++counter}`,
    async stop() {
      connection.disconnect();
      await server.stop();
    },
  };
}

async function redisCluster(): Promise<Place> {
  const cluster: TestRedisCluster = await startTestRedisCluster();
  const connection = connectRedis({ clusterNodes: cluster.nodes }, DURABLE_CONNECTION);
  await connection.ping();
  return {
    connection,
    prefix: `${cluster.prefix}:bull`,
    urls: cluster.nodes,
    queueName: () => `{plain-${++counter}}`,
    async stop() {
      connection.disconnect();
      await cluster.stop();
    },
  };
}

const modes = [
  { mode: "a single Redis", open: singleRedis, skip: false },
  { mode: "a Redis Cluster", open: redisCluster, skip: !redisSupportsCluster() },
];

/** The options Yiem adds its jobs with: tool jobs (both retentions), requests, child runs. */
const OPTIONS: Array<[string, Omit<JobsOptions, "jobId">]> = [
  ["a tool job removed as it completes", { attempts: 1, ...toolJobRetention(0) }],
  ["a tool job kept an hour", { attempts: 1, ...toolJobRetention(3600) }],
  ["a request", { timestamp: 1_700_000_000_123, ...JOB_RETENTION }],
  ["a child run", {}],
];

const DATA = {
  sessionId: "s-1",
  toolName: "getWeather",
  args: { city: "Lima / Perú", n: 1.5, list: [1, "two", { three: true }], empty: {} },
  retries: 0,
};

describe.each(modes)("a plain job added lean on $mode", ({ open, skip }) => {
  let place: Place;
  const closing: Array<{ close(): Promise<unknown> }> = [];

  beforeAll(async () => {
    if (!skip) place = await open();
  }, 60_000);

  afterAll(async () => {
    for (const item of closing.reverse()) await item.close().catch(() => undefined);
    await place?.stop();
  });

  function newQueue(name = place.queueName(), opts: { maxLenEvents?: number } = {}): Queue {
    const queue = new Queue(name, {
      connection: place.connection as ConnectionOptions,
      prefix: place.prefix,
      ...(opts.maxLenEvents ? { streams: { events: { maxLen: opts.maxLenEvents } } } : {}),
    });
    closing.push(queue);
    return queue;
  }

  function newWorker(queue: Queue, options: { name?: string; drainDelay?: number } = {}): Worker {
    const worker = new Worker(queue.name, async (job: Job) => ({ echoed: job.data }), {
      connection: place.connection as ConnectionOptions,
      prefix: place.prefix,
      ...options,
    });
    closing.push(worker);
    return worker;
  }

  /** The job hash as ordered entries, `jobId`'s own id and the timestamp made neutral. */
  async function storedFields(queue: Queue, jobId: string): Promise<Array<[string, string]>> {
    const hash = await place.connection.hgetall(queue.toKey(jobId));
    return Object.entries(hash).map(([field, value]) => [
      field,
      field === "timestamp" ? "<ts>" : value.replaceAll(jobId, "<id>"),
    ]);
  }

  /** `Job.toJSON()` as plain data, its id and timestamp made neutral. */
  async function readBack(queue: Queue, jobId: string): Promise<unknown> {
    const job = await queue.getJob(jobId);
    const json = JSON.parse(JSON.stringify(job?.toJSON())) as Record<string, unknown>;
    return JSON.parse(JSON.stringify({ ...json, timestamp: "<ts>" }).replaceAll(jobId, "<id>"));
  }

  async function eventsOf(queue: Queue): Promise<string[]> {
    const entries = await place.connection.xrange(queue.keys.events ?? "", "-", "+");
    return entries.map(([, fields]) => `${fields[1]} ${fields[3]}`);
  }

  /**
   * Runs `adds` (issued in one pass) under `MONITOR` on every server; resolves with their
   * results (each a job, or the error it rejected with) and the script calls (`EVALSHA`) that
   * carried any of `jobIds` (each of which one must carry), as the lists of those ids each
   * carried, in the order of `jobIds`. BullMQ's own adds carry no job id as an argument.
   */
  async function inOnePass(
    jobIds: string[],
    adds: () => Array<Promise<Job>>,
  ): Promise<{ results: Array<Job | Error>; calls: string[][] }> {
    const monitors = await Promise.all(place.urls.map((url) => startRawMonitor(url)));
    try {
      const results = await Promise.all(
        adds().map((add) => add.catch((err: unknown) => err as Error)),
      );
      const calls = () =>
        monitors
          .flatMap((monitor) => monitor.seen)
          .filter(({ args }) => args[0]?.toLowerCase() === "evalsha")
          .map(({ args }) => jobIds.filter((jobId) => args.includes(jobId)))
          .filter((carried) => carried.length > 0);
      // MONITOR's feed may come a moment after the replies.
      await expect.poll(() => new Set(calls().flat()).size).toBe(jobIds.length);
      return {
        results,
        calls: calls().sort((a, b) => jobIds.indexOf(a[0] ?? "") - jobIds.indexOf(b[0] ?? "")),
      };
    } finally {
      for (const monitor of monitors) monitor.stop();
    }
  }

  it.skipIf(skip).each(OPTIONS)("stores %s as queue.add does", async (_what, options) => {
    const queue = newQueue();
    // From the stream's start: a `QueueEvents` ready before its first read would miss events.
    const heard = new QueueEvents(queue.name, {
      connection: place.connection as ConnectionOptions,
      prefix: place.prefix,
      lastEventId: "0-0",
    });
    closing.push(heard);
    await heard.waitUntilReady();
    const waiting: string[] = [];
    heard.on("waiting", ({ jobId }) => waiting.push(jobId));

    const byBullmq = await queue.add("getWeather", DATA, { ...options, jobId: "s-1.r-1.bull" });
    const lean = await addJobLean(queue, "getWeather", DATA, { ...options, jobId: "s-1.r-1.lean" });
    expect(lean.id).toBe("s-1.r-1.lean");
    expect(lean.asJSON().opts).toEqual({ ...byBullmq.asJSON().opts, jobId: "s-1.r-1.lean" });

    expect(await storedFields(queue, "s-1.r-1.lean")).toEqual(
      await storedFields(queue, "s-1.r-1.bull"),
    );
    expect(await readBack(queue, "s-1.r-1.lean")).toEqual(await readBack(queue, "s-1.r-1.bull"));
    expect(await queue.getJobState("s-1.r-1.lean")).toBe("waiting");
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 2, paused: 0, active: 0 });
    expect(await queue.getWaiting()).toHaveLength(2);
    // BullMQ's `added` (no one reads it for a job with its own id) is the one event not written.
    expect(await eventsOf(queue)).toEqual([
      "added s-1.r-1.bull",
      "waiting s-1.r-1.bull",
      "waiting s-1.r-1.lean",
    ]);

    const worker = newWorker(queue);
    const done = await queue.getJob("s-1.r-1.lean");
    await expect(done?.waitUntilFinished(heard, 10_000)).resolves.toEqual({ echoed: DATA });
    await worker.close();
    expect(await queue.getJobState("s-1.r-1.lean")).toBe(
      options.removeOnComplete === true ? "unknown" : "completed",
    );
    await expect.poll(() => waiting).toContain("s-1.r-1.lean");
  });

  it.skipIf(skip)("wakes a worker blocked on the queue's marker", async () => {
    const queue = newQueue();
    const worker = newWorker(queue, { name: "blocked", drainDelay: 120 });
    const connectionName = `${place.prefix}:${Buffer.from(queue.name).toString("base64")}:w:blocked`;
    // Blocked for 120 s on BZPOPMIN: only the marker's ZADD wakes it within the test's time.
    await expect
      .poll(() => isBlocked(place.connection, connectionName), { timeout: 10_000 })
      .toBe(true);
    const completed = new Promise<string | undefined>((resolve) =>
      worker.once("completed", (job) => resolve(job.id)),
    );
    await addJobLean(queue, "getWeather", DATA, { jobId: "s-1.r-1.woken", attempts: 1 });
    expect(await completed).toBe("s-1.r-1.woken");
  });

  it.skipIf(skip)("adds to paused on a paused queue, as queue.add does", async () => {
    const queue = newQueue();
    await queue.pause();
    await queue.add("getWeather", DATA, { jobId: "s-1.r-1.bull", attempts: 1 });
    await addJobLean(queue, "getWeather", DATA, { jobId: "s-1.r-1.lean", attempts: 1 });
    expect(await queue.getJobState("s-1.r-1.lean")).toBe(await queue.getJobState("s-1.r-1.bull"));
    expect(await queue.getJobCounts()).toMatchObject({ paused: 2, waiting: 0 });
    expect(await place.connection.lrange(queue.keys.paused ?? "", 0, -1)).toEqual([
      "s-1.r-1.lean",
      "s-1.r-1.bull",
    ]);
    expect(await place.connection.zcard(queue.keys.marker ?? "")).toBe(0);
    const worker = newWorker(queue);
    await queue.resume();
    await expect
      .poll(() => queue.getJobState("s-1.r-1.lean"), { timeout: 10_000 })
      .toBe("completed");
    await worker.close();
  });

  it.skipIf(skip)("leaves a job whose id exists as it is, as queue.add does", async () => {
    const queue = newQueue();
    await queue.add("getWeather", { first: "bull" }, { jobId: "s-1.r-1.bull", attempts: 1 });
    await addJobLean(
      queue,
      "getWeather",
      { first: "lean" },
      { jobId: "s-1.r-1.lean", attempts: 1 },
    );
    const before = {
      bull: await place.connection.hgetall(queue.toKey("s-1.r-1.bull")),
      lean: await place.connection.hgetall(queue.toKey("s-1.r-1.lean")),
    };
    for (const jobId of ["s-1.r-1.bull", "s-1.r-1.lean"]) {
      const again = await addJobLean(queue, "other", { second: true }, { jobId, attempts: 3 });
      expect(again.id).toBe(jobId);
    }
    expect(await place.connection.hgetall(queue.toKey("s-1.r-1.bull"))).toEqual(before.bull);
    expect(await place.connection.hgetall(queue.toKey("s-1.r-1.lean"))).toEqual(before.lean);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 2 });
    expect((await eventsOf(queue)).slice(-2)).toEqual([
      "duplicated s-1.r-1.bull",
      "duplicated s-1.r-1.lean",
    ]);
  });

  it.skipIf(skip)(
    "adds the jobs of one pass in one script call, each as queue.add does",
    async () => {
      const queue = newQueue();
      const kinds = OPTIONS.slice(0, 3);
      for (const [i, [, options]] of kinds.entries()) {
        await queue.add("getWeather", { ...DATA, i }, { ...options, jobId: `s-1.r-1.bull${i}` });
      }
      const leanIds = kinds.map((_, i) => `s-1.r-1.lean${i}`);
      const { results, calls } = await inOnePass(leanIds, () =>
        kinds.map(([, options], i) =>
          addJobLean(
            queue,
            "getWeather",
            { ...DATA, i },
            { ...options, jobId: `s-1.r-1.lean${i}` },
          ),
        ),
      );
      expect(calls).toEqual([leanIds]);
      expect(results.map((job) => (job as Job).id)).toEqual(leanIds);
      for (const i of kinds.keys()) {
        const [bull, lean] = [`s-1.r-1.bull${i}`, `s-1.r-1.lean${i}`];
        expect(await storedFields(queue, lean)).toEqual(await storedFields(queue, bull));
        expect(await readBack(queue, lean)).toEqual(await readBack(queue, bull));
      }
      expect(await place.connection.lrange(queue.keys.wait ?? "", 0, 2)).toEqual(
        [...leanIds].reverse(),
      );
      expect((await eventsOf(queue)).slice(-3)).toEqual(leanIds.map((id) => `waiting ${id}`));
      const worker = newWorker(queue);
      await expect
        .poll(() => queue.getJobCounts("waiting", "active"), { timeout: 10_000 })
        .toMatchObject({ waiting: 0, active: 0 });
      await worker.close();
      for (const i of kinds.keys()) {
        const bullState = await queue.getJobState(`s-1.r-1.bull${i}`);
        expect(await queue.getJobState(`s-1.r-1.lean${i}`)).toBe(bullState);
      }
    },
  );

  it.skipIf(skip)("leaves alone only the job of a pass whose id exists", async () => {
    const queue = newQueue();
    await addJobLean(queue, "getWeather", { first: true }, { jobId: "s-1.r-1.c0", attempts: 1 });
    const before = await place.connection.hgetall(queue.toKey("s-1.r-1.c0"));
    const ids = ["s-1.r-1.c0", "s-1.r-1.c1", "s-1.r-1.c2"];
    const { results, calls } = await inOnePass(ids, () =>
      ids.map((jobId) => addJobLean(queue, "getWeather", DATA, { jobId, attempts: 1 })),
    );
    expect(calls).toEqual([ids]);
    expect(results.map((job) => (job as Job).id)).toEqual(ids);
    expect(await place.connection.hgetall(queue.toKey("s-1.r-1.c0"))).toEqual(before);
    for (const jobId of ids.slice(1)) expect((await queue.getJob(jobId))?.data).toEqual(DATA);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 3 });
    expect((await eventsOf(queue)).slice(-3)).toEqual([
      "duplicated s-1.r-1.c0",
      "waiting s-1.r-1.c1",
      "waiting s-1.r-1.c2",
    ]);
  });

  it.skipIf(skip)(
    "adds a pass's jobs to paused on a paused queue, without the marker",
    async () => {
      const queue = newQueue();
      await queue.pause();
      const ids = ["s-1.r-1.p0", "s-1.r-1.p1"];
      const { calls } = await inOnePass(ids, () =>
        ids.map((jobId) => addJobLean(queue, "getWeather", DATA, { jobId, attempts: 1 })),
      );
      expect(calls).toEqual([ids]);
      expect(await queue.getJobCounts()).toMatchObject({ paused: 2, waiting: 0 });
      expect(await place.connection.zcard(queue.keys.marker ?? "")).toBe(0);
    },
  );

  it.skipIf(skip)("adds a pass mixing plain jobs with ones BullMQ adds", async () => {
    const plain = newQueue();
    const limited = newQueue();
    await limited.setGlobalConcurrency(1);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const ids = ["s-1.plain0", "s-1.prio", "s-1.plain1", "s-1.bad", "s-1.lim0", "s-1.lim1"];
    const scripted = ["s-1.plain0", "s-1.plain1", "s-1.lim0", "s-1.lim1"];
    const { results, calls } = await inOnePass(scripted, () => [
      addJobLean(plain, "t", DATA, { jobId: "s-1.plain0", attempts: 1 }),
      addJobLean(plain, "t", DATA, { jobId: "s-1.prio", priority: 3 }),
      addJobLean(plain, "t", DATA, { jobId: "s-1.plain1", attempts: 1 }),
      addJobLean(plain, "t", circular, { jobId: "s-1.bad", attempts: 1 }),
      addJobLean(limited, "t", DATA, { jobId: "s-1.lim0" }),
      addJobLean(limited, "t", DATA, { jobId: "s-1.lim1" }),
    ]);
    // One call a queue for its plain jobs (the limited queue's declined by the script, its
    // jobs then added by BullMQ, as the prioritized one is); the job that cannot be stored
    // fails alone, before any call.
    expect(calls).toEqual([
      ["s-1.plain0", "s-1.plain1"],
      ["s-1.lim0", "s-1.lim1"],
    ]);
    expect(results[3]).toBeInstanceOf(Error);
    const jobs = results.filter((job): job is Job => !(job instanceof Error));
    expect(jobs.map((job) => job.id)).toEqual(ids.filter((id) => id !== "s-1.bad"));
    expect(await plain.getJobState("s-1.bad")).toBe("unknown");
    expect(await plain.getJobCounts()).toMatchObject({ waiting: 2, prioritized: 1 });
    expect(await eventsOf(limited)).toEqual(
      expect.arrayContaining(["added s-1.lim0", "added s-1.lim1"]),
    );
    expect(await limited.getJobCounts()).toMatchObject({ waiting: 2 });
  });

  it.skipIf(skip)("trims the events stream to the queue's length, as queue.add does", async () => {
    const queue = newQueue(undefined, { maxLenEvents: 10 });
    await queue.waitUntilReady();
    const adds = Array.from({ length: 400 }, (_, i) =>
      addJobLean(queue, "getWeather", DATA, { jobId: `s-1.r-1.c${i}`, attempts: 1 }),
    );
    await Promise.all(adds);
    // Trimmed with `~` (whole stream nodes of 100 entries), so about 10 to 100 stay, never 400.
    expect(await place.connection.xlen(queue.keys.events ?? "")).toBeLessThanOrEqual(110);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 400 });
  });

  it.skipIf(skip)("leaves to BullMQ what it does not handle itself", async () => {
    const limited = newQueue();
    await limited.setGlobalConcurrency(1);
    const rated = newQueue();
    await rated.setGlobalRateLimit(1, 1000);
    const plain = newQueue();
    const added = [
      [limited, await addJobLean(limited, "t", DATA, { jobId: "s-1.limited" })],
      [rated, await addJobLean(rated, "t", DATA, { jobId: "s-1.rated" })],
      [plain, await addJobLean(plain, "t", DATA, { jobId: "s-1.prio", priority: 3 })],
      [plain, await addJobLean(plain, "t", DATA, { jobId: "s-1.later", delay: 60_000 })],
      [plain, await addJobLean(plain, "t", DATA, { jobId: "s-1.lifo", lifo: true })],
    ] as const;
    for (const [queue, job] of added) {
      // BullMQ's own add writes `added`; the lean one never does.
      expect(await eventsOf(queue)).toContain(`added ${job.id}`);
    }
    expect(await plain.getJobState("s-1.prio")).toBe("prioritized");
    expect(await plain.getJobState("s-1.later")).toBe("delayed");
    await expect(addJobLean(plain, "t", DATA, { jobId: "42" })).rejects.toThrow(
      "Custom Id cannot be integers",
    );
  });
});

/** Whether a connection named `name` is blocked (on any master, on a cluster). */
async function isBlocked(connection: RedisClient, name: string): Promise<boolean> {
  const nodes = "nodes" in connection ? (connection as Cluster).nodes("master") : [connection];
  for (const node of nodes) {
    const list = (await node.client("LIST")) as string;
    const blocked = list
      .split("\n")
      .some((line) => line.includes(` name=${name} `) && / flags=\w*b/.test(line));
    if (blocked) return true;
  }
  return false;
}
