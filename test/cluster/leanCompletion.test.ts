/**
 * A job an `EagerWorker` completes without taking the next one goes through Yiem's own script
 * (`completeJobLean`), not BullMQ's `moveToFinished`: what BullMQ's API, its events and a flow's
 * parent see must be what they see of a job a plain BullMQ `Worker` completed, in fewer
 * commands. Read through BullMQ's public API against a real Redis.
 */

import { createHash } from "node:crypto";
import { completeJobLean, EagerWorker } from "@yiem/core/internal";
import {
  FlowProducer,
  type Job,
  type KeepJobs,
  type Queue,
  Worker,
  type WorkerOptions,
} from "bullmq";
import { describe, expect, it } from "vitest";
import { useBullQueues } from "../support/bullQueues.js";
import { openMonitor } from "../support/redisConnection.js";

const bull = useBullQueues();

type Processor = (job: Job) => Promise<unknown>;

/** A fresh queue with its events reader. */
const openQueue = () => bull.openQueue("lean");

/** An `EagerWorker` that takes no job on finishing (a tool queue's), or a plain BullMQ one. */
async function startWorker(
  kind: "eager" | "plain",
  queue: Queue,
  processor: Processor,
  options: Partial<WorkerOptions> = {},
): Promise<Worker> {
  const settings = {
    connection: bull.connection,
    prefix: bull.bullPrefix,
    concurrency: 4,
    ...options,
  };
  const worker =
    kind === "eager"
      ? new EagerWorker(queue.name, processor, settings)
      : new Worker(queue.name, processor, settings);
  if (worker instanceof EagerWorker) worker.fetchOnFinish = false;
  bull.opened.unshift(worker);
  await worker.waitUntilReady();
  return worker;
}

/** The commands Redis ran inside each script call sent on `queue`'s keys, in order. */
async function watchScripts(): Promise<string[][]> {
  const calls: string[][] = [];
  const monitor = await openMonitor(bull.redis.url);
  bull.opened.push({ close: async () => monitor.disconnect() });
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    const command = String(args[0]).toLowerCase();
    if (command === "evalsha" || command === "eval") calls.push([]);
    else if (source === "lua") calls.at(-1)?.push(command);
  });
  return calls;
}

/** Runs one job with `keep` through a worker of `kind`; returns it as BullMQ reads it then. */
async function completeOne(kind: "eager" | "plain", keep: boolean | KeepJobs) {
  const { queue, events } = await openQueue();
  await startWorker(kind, queue, async (job) => ({ echoed: job.data.n }));
  const seen: Array<{ jobId: string; returnvalue: unknown }> = [];
  events.on("completed", (event) => seen.push(event));
  const job = await queue.add("call", { n: 7 }, { jobId: "j1", removeOnComplete: keep });
  const result = await job.waitUntilFinished(events, 20_000);
  const stored = await queue.getJob("j1");
  const counts = await queue.getJobCounts("active", "completed", "wait");
  const hash = await bull.connection.hgetall(`${bull.bullPrefix}:${queue.name}:j1`);
  const lock = await bull.connection.exists(`${bull.bullPrefix}:${queue.name}:j1:lock`);
  return { queue, result, stored, counts, fields: Object.keys(hash).sort(), lock, seen };
}

describe("a job completed by Yiem's script", () => {
  it("looks to BullMQ as one a plain BullMQ worker completed: state, fields, counts, events", async () => {
    const keep = { age: 3600, count: 100 };
    const plain = await completeOne("plain", keep);
    const lean = await completeOne("eager", keep);
    expect(lean.result).toEqual({ echoed: 7 });
    expect(await lean.stored?.getState()).toBe("completed");
    expect(lean.stored?.returnvalue).toEqual({ echoed: 7 });
    expect(lean.stored?.attemptsMade).toBe(1);
    expect(lean.stored?.finishedOn).toBeGreaterThanOrEqual(lean.stored?.processedOn ?? Infinity);
    expect(lean.counts).toEqual({ active: 0, completed: 1, wait: 0 });
    expect(lean.lock).toBe(0);
    expect(lean.fields).toEqual(plain.fields);
    expect(lean.seen).toEqual(plain.seen);
    expect((await lean.queue.getCompleted()).map((job) => job.id)).toEqual(["j1"]);
  });

  it("is removed as it completes when nothing is kept, and QueueEvents still hears it", async () => {
    const lean = await completeOne("eager", true);
    expect(lean.result).toEqual({ echoed: 7 });
    expect(lean.stored).toBeUndefined();
    expect(lean.counts).toEqual({ active: 0, completed: 0, wait: 0 });
    expect(lean.fields).toEqual([]);
    expect(lean.seen).toEqual([{ jobId: "j1", returnvalue: { echoed: 7 }, prev: "active" }]);
  });

  it("costs fewer commands than BullMQ's finish", async () => {
    const calls = await watchScripts();
    await completeOne("eager", { age: 3600, count: 100 });
    await new Promise((resolve) => setTimeout(resolve, 100)); // MONITOR's last lines
    const finishes = calls.filter((commands) => commands.includes("srem")); // the lock's release
    expect(finishes).toHaveLength(1);
    // BullMQ's moveToFinished runs 18 here (its pruning, trimming and `drained` look included).
    expect(finishes[0]?.length).toBeLessThanOrEqual(11);
  });

  it("moves a flow's parent on: a child job completes through BullMQ's own script", async () => {
    const { queue: children } = await openQueue();
    const { queue: parents, events: parentEvents } = await openQueue();
    await startWorker("eager", children, async (job) => `child ${job.data.n}`);
    await startWorker("plain", parents, async (job) => job.getChildrenValues());
    const flow = new FlowProducer({ connection: bull.connection, prefix: bull.bullPrefix });
    bull.opened.push(flow);
    const tree = await flow.add({
      name: "parent",
      queueName: parents.name,
      data: {},
      children: [{ name: "child", queueName: children.name, data: { n: 1 } }],
    });
    const values = await tree.job.waitUntilFinished(parentEvents, 20_000);
    expect(Object.values(values as Record<string, string>)).toEqual(["child 1"]);
  });
});

describe("a completion guarded by a stored text", () => {
  it("completes the job only once the guarded key holds that text, and touches nothing before", async () => {
    const { queue } = await openQueue();
    const worker = new Worker(queue.name, undefined, {
      connection: bull.connection,
      prefix: bull.bullPrefix,
    });
    bull.opened.unshift(worker);
    await queue.add("ask", { n: 1 }, { jobId: "r1" });
    const job = (await worker.getNextJob("token-1")) as Job;
    const key = `${bull.bullPrefix}:answers:r1`;
    const answer = JSON.stringify({ text: "stored" });
    const onlyIf = { key, sha1: createHash("sha1").update(answer).digest("hex") };
    const complete = () => completeJobLean(worker, job, "token-1", { answer }, { onlyIf });
    expect(await complete()).toBe("not stored"); // nothing stored yet
    await bull.connection.set(key, "another answer");
    expect(await complete()).toBe("not stored"); // another text
    expect(await job.getState()).toBe("active");
    expect(await bull.connection.exists(`${bull.bullPrefix}:${queue.name}:r1:lock`)).toBe(1);
    await bull.connection.set(key, answer);
    expect(await complete()).toBe("completed");
    expect((await queue.getJob("r1"))?.returnvalue).toEqual({ answer });
  });
});

describe("old completed jobs", () => {
  it("are pruned once past their age, in one batch", async () => {
    const { queue, events } = await openQueue();
    await startWorker("eager", queue, async () => "done");
    const run = async (jobId: string) =>
      (await queue.add("call", {}, { jobId, removeOnComplete: { age: 1 } })).waitUntilFinished(
        events,
        20_000,
      );
    for (const id of ["old-1", "old-2", "old-3"]) await run(id);
    expect(await queue.getJobCountByTypes("completed")).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 1_600)); // past the age and its slack
    await run("new");
    expect((await queue.getCompleted()).map((job) => job.id)).toEqual(["new"]);
    expect(await queue.getJob("old-1")).toBeUndefined();
  });

  it("are pruned down to their count once past it", async () => {
    const { queue, events } = await openQueue();
    await startWorker("eager", queue, async () => "done");
    const run = async (jobId: string) =>
      (await queue.add("call", {}, { jobId, removeOnComplete: { count: 2 } })).waitUntilFinished(
        events,
        20_000,
      );
    for (let n = 1; n <= 5; n++) await run(`j${n}`);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the next finish looks
    await run("j6");
    expect(await queue.getJobCountByTypes("completed")).toBe(2);
    expect(await queue.getJob("j1")).toBeUndefined();
  });
});
