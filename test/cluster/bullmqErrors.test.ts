/**
 * `classifyBullmqError` and `classifyJobFailure` fed what a real BullMQ on a real Redis gives:
 * completing a job with the wrong token, after its lock is gone, out of the active state, or
 * after it was removed is a `JobMovedOnError` (the coordinator stops trying to complete it);
 * a job whose worker stopped renewing its lock fails as stalled.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { isTransient, RedisCommandError } from "@yiem/core";
import { classifyBullmqError, classifyJobFailure, JobMovedOnError } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { ErrorCode, Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: TestRedis;
let queue: Queue;
let worker: Worker;
const NAME = "errors";

beforeAll(async () => {
  server = await startTestRedis();
  const connection = { url: server.url };
  const prefix = `${server.prefix}:bull`;
  queue = new Queue(NAME, { connection, prefix });
  worker = new Worker(NAME, undefined, {
    connection,
    prefix,
    lockDuration: 300,
    stalledInterval: 100,
    maxStalledCount: 0,
  });
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
});

afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await server.stop();
});

/** Adds a job and takes it with a fresh token, as a coordinator holding a request does. */
async function takeJob(): Promise<{ job: Job; token: string }> {
  const added = await queue.add("ask", { input: "hi" });
  const token = randomUUID();
  for (let tries = 0; tries < 50; tries++) {
    const job = await worker.getNextJob(token, { block: false });
    if (job && job.id === added.id) return { job, token };
    if (job) throw new Error(`took another job: ${job.id}`);
    await sleep(20);
  }
  throw new Error("the job was never taken");
}

/** What completing `job` with `token` rejected with (fails the test when it completes). */
async function completionError(job: Job, token: string): Promise<Error> {
  try {
    await job.moveToCompleted({ ok: true }, token, false);
  } catch (err) {
    return err as Error;
  }
  throw new Error("the job completed");
}

/** Expects `err` to classify as moved on with BullMQ's `code`, naming the request. */
function expectMovedOn(err: Error, code: ErrorCode): void {
  const typed = classifyBullmqError(err, { requestId: "r-1" });
  expect(typed).toBeInstanceOf(JobMovedOnError);
  expect([(typed as JobMovedOnError).code, typed.retry, typed.message, typed.context]).toEqual([
    code,
    "terminal",
    err.message,
    { requestId: "r-1" },
  ]);
}

describe("classifyBullmqError, fed BullMQ's real errors", () => {
  it("completing with another token (a lock mismatch) is moved on", async () => {
    const { job, token } = await takeJob();
    const err = await completionError(job, "not-the-token");
    expect(err.message).toMatch(/^Lock mismatch for job/);
    expectMovedOn(err, ErrorCode.JobLockMismatch);
    await job.moveToCompleted({ ok: true }, token, false);
  });

  it("completing after the lock is gone (a missing lock) is moved on", async () => {
    const { job, token } = await takeJob();
    const redis = new Redis(server.url);
    await redis.del(`${server.prefix}:bull:${NAME}:${job.id}:lock`);
    redis.disconnect();
    const err = await completionError(job, token);
    expect(err.message).toMatch(/^Missing lock for job/);
    expectMovedOn(err, ErrorCode.JobLockNotExist);
    await job.remove();
  });

  it("completing a job that is not active is moved on", async () => {
    const job = await queue.add("ask", { input: "waiting" });
    const err = await completionError(job, "0"); // BullMQ's token for "no lock to check"
    expect(err.message).toMatch(/is not in the active state/);
    expectMovedOn(err, ErrorCode.JobNotInState);
    await job.remove();
  });

  it("completing a job that was removed (its key is missing) is moved on", async () => {
    const gone = new Job(queue, "ask", {}, {}, `gone-${randomUUID()}`);
    const err = await completionError(gone, randomUUID());
    expect(err.message).toMatch(/^Missing key for job/);
    expectMovedOn(err, ErrorCode.JobNotExist);
  });

  it("a Redis failure under BullMQ is a Redis failure, not moved on", async () => {
    const closed = new Queue(NAME, {
      connection: { url: server.url, maxRetriesPerRequest: 0 },
      prefix: `${server.prefix}:bull`,
    });
    closed.on("error", () => undefined);
    await closed.waitUntilReady();
    (await closed.client).disconnect();
    const err = await closed.add("ask", {}).then(
      () => new Error("added"),
      (e: Error) => e,
    );
    await closed.close().catch(() => undefined);
    const typed = classifyBullmqError(err);
    expect(err.message).toBe("Connection is closed.");
    expect(typed).toBeInstanceOf(RedisCommandError);
    expect(isTransient(typed)).toBe(true);
  });
});

describe("classifyJobFailure, fed BullMQ's real failed reason", () => {
  it("a job whose worker stopped renewing its lock fails as stalled (transient)", async () => {
    const { job } = await takeJob(); // taken, and never extended nor finished
    await worker.startStalledCheckTimer();
    const stateOf = async () => queue.getJobState(job.id ?? "");
    for (let tries = 0; tries < 200 && (await stateOf()) === "active"; tries++) await sleep(50);
    // Back in the wait list with its failure deferred: the next fetch fails it.
    expect(await worker.getNextJob(randomUUID(), { block: false })).toBeUndefined();
    const { failedReason } = (await queue.getJob(job.id ?? "")) as Job;
    expect([await stateOf(), failedReason]).toEqual([
      "failed",
      "job stalled more than allowable limit",
    ]);
    const failure = classifyJobFailure(failedReason ?? "", { toolName: "fetch", toolCallId: "c1" });
    expect([failure.stalled, failure.retry, failure.message, failure.context]).toEqual([
      true,
      "transient",
      failedReason,
      { toolName: "fetch", toolCallId: "c1" },
    ]);
  });

  it("a job whose work threw is not stalled (terminal)", async () => {
    const { job, token } = await takeJob();
    await job.moveToFailed(new Error("fetch: HTTP 500"), token, false);
    const { failedReason } = (await queue.getJob(job.id ?? "")) as Job;
    const failure = classifyJobFailure(failedReason);
    expect([failedReason, failure.stalled, failure.retry]).toEqual([
      "fetch: HTTP 500",
      false,
      "terminal",
    ]);
  });
});
