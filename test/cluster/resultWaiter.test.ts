/**
 * The coordinator's `ResultWaiter` against a real Redis: two waits on one tool job id (a
 * model's colliding call ids once made them) must both end, never replace each other and hang
 * a run; a job a plain BullMQ worker completes (no announcement) is seen by the waiter's polls;
 * a job a Yiem tool worker ends is seen from the worker's announcement, with the polls pushed
 * out past the test's timeout.
 */
import {
  type AgentTool,
  clusterKeys,
  connectRedis,
  type RedisClient,
  registerTool,
  startToolWorker,
  type ToolJobResult,
  ToolStore,
  type ToolWorkerHandle,
} from "@yiem/core";
import {
  DURABLE_CONNECTION,
  type JobEnd,
  ResultWaiter,
  toolJobRetention,
} from "@yiem/core/internal";
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
  waiter = new ResultWaiter(command, clusterKeys(redis.prefix), {
    timing: { firstPollMs: 100, pollMs: 200 },
  });
  queue = new Queue("tools-default", { connection: command, prefix: bullPrefix });
  await waiter.listen(queue);
});

afterAll(async () => {
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
  afterAll(async () => {
    await worker?.close(); // it serves the tool queue the next scenarios' worker serves
  });

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

/** A tool that answers `text`, or waits for its signal when told `{ hang: true }`. */
const echoTool: AgentTool = {
  name: "echo",
  label: "echo",
  description: "Answers its text; hangs until aborted when told to",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  parallelToolExecute: true,
  execute: (_id, args) => ({ content: [{ type: "text", text: String(args.text) }], details: {} }),
};

describe("ResultWaiter with a Yiem tool worker", () => {
  let announced: ResultWaiter;
  let toolQueue: Queue;
  let toolWorker: ToolWorkerHandle;

  beforeAll(async () => {
    const keys = clusterKeys(redis.prefix);
    // No poll within the test's timeout: only the worker's announcement can end a wait.
    announced = new ResultWaiter(command, keys, {
      timing: { firstPollMs: 60_000, pollMs: 60_000 },
    });
    toolQueue = new Queue(keys.toolQueueFor(undefined, "s2"), {
      connection: command,
      prefix: keys.bullPrefix,
    });
    await announced.listen(toolQueue);
    const toolStore = new ToolStore({ name: "waiterWorker" });
    registerTool(toolStore, echoTool);
    toolWorker = await startToolWorker({
      redis: redis.url,
      prefix: redis.prefix,
      toolStore,
      workerId: "waiter-worker",
    });
  });

  afterAll(async () => {
    await toolWorker?.close();
    await announced?.close();
    await toolQueue?.close();
  });

  /** Adds the job of call `callId` of session s2, asking `echo` for `text`. */
  const addEcho = (callId: string, text: string) => () =>
    toolQueue.add(
      "echo",
      {
        sessionId: "s2",
        runId: "r1",
        toolCallId: callId,
        toolName: "echo",
        args: { text },
        retries: 0,
      },
      { jobId: `s2.r1.${callId}`, attempts: 1 },
    );

  it("ends a wait with the result the worker announces, before any poll", async () => {
    const jobId = "s2.r1.c_1";
    const end = await announced.waitForJobEnd(toolQueue, jobId, addEcho("c_1", "announced"));
    expect(end.kind).toBe("completed");
    const value = end.kind === "completed" ? end.value : undefined;
    expect(value?.result.content).toEqual([{ type: "text", text: "announced" }]);
    expect(value?.workerId).toBe("waiter-worker");
  });

  it("ends a wait whose announcement it missed with the result the removed job's marker keeps", async () => {
    // Not listening: the announcement goes unheard, as while a subscriber reconnects.
    const deaf = new ResultWaiter(command, clusterKeys(redis.prefix), {
      timing: { firstPollMs: 100, pollMs: 200 },
    });
    const jobId = "s2.r1.c_3";
    const add = () =>
      toolQueue.add(
        "echo",
        {
          sessionId: "s2",
          runId: "r1",
          toolCallId: "c_3",
          toolName: "echo",
          args: { text: "kept" },
          retries: 0,
        },
        { jobId, attempts: 1, ...toolJobRetention(0) }, // removed as it completes (the default)
      );
    try {
      const end = await deaf.waitForJobEnd(toolQueue, jobId, add);
      expect(await toolQueue.getJob(jobId)).toBeUndefined();
      expect(end.kind).toBe("completed");
      const value = end.kind === "completed" ? end.value : undefined;
      expect(value?.result.content).toEqual([{ type: "text", text: "kept" }]);
    } finally {
      await deaf.close();
    }
  });

  it("ends a wait with the failure the worker announces (a refused re-run), before any poll", async () => {
    const jobId = "s2.r1.c_2";
    const first = await announced.waitForJobEnd(toolQueue, jobId, addEcho("c_2", "once"));
    expect(first.kind).toBe("completed");
    // Bull Board's "retry" of a completed job: the worker refuses to run the call twice.
    const job = await toolQueue.getJob(jobId);
    const failed = announced.waitForJobEnd(toolQueue, jobId, async () => job?.retry("completed"));
    const end = await failed;
    expect(end.kind).toBe("failed");
    expect(end.kind === "failed" ? end.reason : "").toMatch(/^refused: tool call c_2/);
  });
});
