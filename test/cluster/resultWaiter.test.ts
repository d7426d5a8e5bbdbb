/**
 * The coordinator's `ResultWaiter` against a real Redis and plain BullMQ: two waits on one
 * tool job id (a model's colliding call ids once made them) must both end, never replace
 * each other and hang a run.
 */
import { connectRedis, type RedisClient, type ToolJobResult } from "@yiem/core";
import { DURABLE_CONNECTION, type JobEnd, ResultWaiter } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let redis: TestRedis;
let command: RedisClient;
let waiter: ResultWaiter;
let queue: Queue;
let worker: Worker | undefined;

const value: ToolJobResult = {
  result: { content: [{ type: "text", text: "done once" }], details: {} },
  isError: false,
  workerId: "plain-bullmq",
  durationMs: 0,
};

beforeAll(async () => {
  redis = await startTestRedis();
  command = connectRedis(redis.url, DURABLE_CONNECTION);
  const bullPrefix = `${redis.prefix}:bull`;
  waiter = new ResultWaiter(command, bullPrefix);
  queue = new Queue("tools-default", { connection: command, prefix: bullPrefix });
  await waiter.listen(queue);
});

afterAll(async () => {
  await worker?.close();
  await waiter.close();
  await queue.close();
  command.disconnect();
  await redis.stop();
});

/** Starts a plain BullMQ worker that completes every job with `value`, counting the jobs it ran. */
function startCountingWorker(ran: string[]): Worker {
  return new Worker(
    "tools-default",
    async (job) => {
      ran.push(job.id ?? "");
      return value;
    },
    { connection: command, prefix: `${redis.prefix}:bull` },
  );
}

describe("ResultWaiter", () => {
  it("ends both of two waits on one job id with the job's end, the job added once", async () => {
    const jobId = "s1.r1.c_1";
    const add = () => queue.add("sleepFor", {}, { jobId });
    const first = waiter.waitForJobEnd(queue, jobId, add);
    const second = waiter.waitForJobEnd(queue, jobId, add);
    const ran: string[] = [];
    worker = startCountingWorker(ran);
    const ends: JobEnd[] = await Promise.all([first, second]);
    expect(ends).toEqual([
      { kind: "completed", value },
      { kind: "completed", value },
    ]);
    expect(ran).toEqual([jobId]);
  });

  it("ends only its own wait when one of two waits on a job is aborted", async () => {
    await worker?.pause();
    const jobId = "s1.r1.c_2";
    const add = () => queue.add("sleepFor", {}, { jobId });
    const controller = new AbortController();
    const first = waiter.waitForJobEnd(queue, jobId, add, controller.signal);
    const second = waiter.waitForJobEnd(queue, jobId, add);
    controller.abort();
    expect(await first).toEqual({ kind: "aborted" });
    worker?.resume();
    expect(await second).toEqual({ kind: "completed", value });
  });
});
