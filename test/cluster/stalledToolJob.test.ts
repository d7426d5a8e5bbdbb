/**
 * A tool job BullMQ fails as stalled (its worker stopped renewing its lock past
 * `maxStalledCount`): the call may have run, so the coordinator's remote executor must never
 * answer it with a plain failure. It waits the grace (`lateResultGraceMs`) for the stopped
 * worker's finished marker: a result recorded within it is the call's result; none gives the
 * "may have run" result, with `details.mayHaveRun`. The stopped worker here is a plain BullMQ
 * worker that takes the job and never extends its lock; its late result is written as a Yiem
 * worker writes it (`recordJobEnd`).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  clusterKeys,
  connectRedis,
  createLogger,
  executeToolCalls,
  isMayHaveRun,
  MAY_HAVE_RUN_MESSAGE,
  type RedisClient,
  type ToolJobData,
} from "@yiem/core";
import {
  createRemoteExecutor,
  DURABLE_CONNECTION,
  ResultWaiter,
  recordJobEnd,
  toolJobId,
} from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { type Job, Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningQueueFor } from "../support/listeningQueues.js";
import {
  assistantWith,
  contextWith,
  makeCall,
  makeTool,
  textResult,
} from "../support/toolFixtures.js";

const sendTool = makeTool("send", {
  parallelToolExecute: true,
  execute: () => textResult("never runs here: the call goes to the queue"),
});

let redis: TestRedis;
let command: RedisClient;
let waiter: ResultWaiter;
const closing: Array<{ close(): Promise<unknown> }> = [];

beforeAll(async () => {
  redis = await startTestRedis();
  command = connectRedis(redis.url, DURABLE_CONNECTION);
  waiter = new ResultWaiter(command, clusterKeys(redis.prefix), {
    timing: { firstPollMs: 50, pollMs: 100 },
    lateResultGraceMs: 3000,
  });
});

afterAll(async () => {
  await waiter.close();
  for (const open of closing.reverse()) await open.close();
  command.disconnect();
  await redis.stop();
});

/** Runs one `send` call of session `sessionId` through the remote executor; resolves with its message. */
async function runCall(sessionId: string) {
  const keys = clusterKeys(redis.prefix);
  const queueFor = listeningQueueFor(command, keys, waiter, closing);
  const executor = createRemoteExecutor({ sessionId, runId: "r1", queueFor, waiter });
  const call = makeCall("call_1", "send", { to: "someone" });
  const batch = await executeToolCalls(
    contextWith([sendTool]),
    assistantWith([call]),
    [call],
    { toolExecution: "parallel", executor },
    undefined,
    () => undefined,
  );
  return batch.messages[0];
}

/**
 * Plays the worker that stops: takes job `jobId` and never extends its lock, until BullMQ's
 * stalled checker (no stall allowed) fails it; resolves with the job as it was taken.
 */
async function takeAndStall(sessionId: string, jobId: string): Promise<Job<ToolJobData>> {
  const keys = clusterKeys(redis.prefix);
  const stopped = new Worker<ToolJobData>(keys.toolQueueFor(undefined, sessionId), undefined, {
    connection: { url: redis.url },
    prefix: keys.bullPrefix,
    lockDuration: 300,
    stalledInterval: 100,
    maxStalledCount: 0,
  });
  closing.push(stopped);
  let taken: Job<ToolJobData> | undefined;
  while (!taken) {
    taken = await stopped.getNextJob(randomUUID(), { block: false });
    if (!taken) await sleep(20);
  }
  expect(taken.id).toBe(jobId);
  await stopped.startStalledCheckTimer();
  const queue = new Queue(keys.toolQueueFor(undefined, sessionId), {
    connection: command,
    prefix: keys.bullPrefix,
  });
  closing.push(queue);
  // Back in the wait list with its failure deferred: the next fetch fails it.
  while ((await queue.getJobState(jobId)) === "active") await sleep(50);
  while ((await queue.getJobState(jobId)) !== "failed") {
    await stopped.getNextJob(randomUUID(), { block: false });
    await sleep(20);
  }
  expect((await queue.getJob(jobId))?.failedReason).toMatch(/stalled/);
  return taken;
}

describe("a tool job failed as stalled", () => {
  it("answers 'may have run' when the stopped worker records nothing within the grace", async () => {
    const sessionId = randomUUID();
    const [message] = await Promise.all([
      runCall(sessionId),
      takeAndStall(sessionId, toolJobId(sessionId, "r1", "call_1")),
    ]);
    expect(message?.isError).toBe(true);
    expect(message?.content).toEqual([
      {
        type: "text",
        text: `send: ${MAY_HAVE_RUN_MESSAGE} (job stalled more than allowable limit)`,
      },
    ]);
    expect(isMayHaveRun(message?.details)).toBe(true);
    expect(message?.details).toEqual({
      mayHaveRun: true,
      reason: "job stalled more than allowable limit",
    });
  });

  it("answers with the stopped worker's own result when it records one within the grace", async () => {
    const sessionId = randomUUID();
    const jobId = toolJobId(sessionId, "r1", "call_1");
    const answered = runCall(sessionId);
    const taken = await takeAndStall(sessionId, jobId);
    await sleep(500); // the executor's polls (every 100 ms) have seen the failure by now
    // It wakes up, finishes the call and records its end, as a Yiem worker does.
    const sink = {
      command,
      keys: clusterKeys(redis.prefix),
      log: createLogger("stopped-worker", "silent"),
    };
    const value = {
      result: textResult("sent to someone"),
      isError: false,
      workerId: "stopped-worker",
      durationMs: 5,
    };
    recordJobEnd(sink, taken, { kind: "completed", value });
    const message = await answered;
    expect([message?.isError, message?.content, isMayHaveRun(message?.details)]).toEqual([
      false,
      [{ type: "text", text: "sent to someone" }],
      false,
    ]);
  });
});
