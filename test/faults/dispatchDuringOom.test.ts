/**
 * A remote call dispatched while Redis refuses writes (out of memory under `noeviction`): the
 * coordinator's remote executor must wait for Redis and the call must get its tool's result
 * once memory is back, not an error result that tells the model about an outage the run
 * outlives (the fault suite's out-of-memory scenario once answered a run with "could not
 * dispatch the call: OOM command not allowed…"). Calls whose adds went out in one script call
 * each wait on their own: one aborted meanwhile is not added, the others are.
 */
import {
  clusterKeys,
  connectRedis,
  executeToolCalls,
  type RedisClient,
  registerTool,
  startToolWorker,
  type ToolExecutor,
  ToolStore,
  type ToolWorkerHandle,
} from "@yiem/core";
import {
  createRemoteExecutor,
  DURABLE_CONNECTION,
  ResultWaiter,
  toolJobId,
} from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import type { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningQueueFor } from "../support/listeningQueues.js";
import {
  assistantWith,
  contextWith,
  makeCall,
  makeTool,
  textResult,
} from "../support/toolFixtures.js";

const echoTool = makeTool("echo", {
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`echo: ${String(args.text)}`),
});

let redis: TestRedis;
let command: RedisClient;
let waiter: ResultWaiter;
let worker: ToolWorkerHandle;
const queues: Queue[] = [];

beforeAll(async () => {
  redis = await startTestRedis({ privateServer: true });
  command = connectRedis(redis.url, DURABLE_CONNECTION);
  waiter = new ResultWaiter(command, clusterKeys(redis.prefix));
  const toolStore = new ToolStore({ name: "oomWorker" });
  registerTool(toolStore, echoTool);
  worker = await startToolWorker({ redis: redis.url, prefix: redis.prefix, toolStore });
});

afterAll(async () => {
  await worker.close();
  await waiter.close();
  await Promise.all(queues.map((queue) => queue.close()));
  command.disconnect();
  await redis.stop();
});

describe("faults: a remote call dispatched while Redis is out of memory", () => {
  it("waits for memory and answers with the tool's result", async () => {
    const keys = clusterKeys(redis.prefix);
    const queueFor = listeningQueueFor(command, keys, waiter, queues);
    const executor = createRemoteExecutor({ sessionId: "s-oom", runId: "r1", queueFor, waiter });
    const admin = connectRedis(redis.url);
    await admin.config("SET", "maxmemory-policy", "noeviction");
    await admin.config("SET", "maxmemory", "1");
    setTimeout(() => void admin.config("SET", "maxmemory", "0"), 1500);
    const call = makeCall("call_1", "echo", { text: "hi" });
    const batch = await executeToolCalls(
      contextWith([echoTool]),
      assistantWith([call]),
      [call],
      { toolExecution: "parallel", executor },
      undefined,
      () => undefined,
    );
    admin.disconnect();
    expect(batch.messages[0]?.content).toEqual([{ type: "text", text: "echo: hi" }]);
    expect(batch.messages[0]?.isError).toBe(false);
  });

  it("adds the other calls of a pass when one of them is aborted while it waits", async () => {
    const keys = clusterKeys(redis.prefix);
    const queueFor = listeningQueueFor(command, keys, waiter, queues);
    const remote = createRemoteExecutor({ sessionId: "s-oom2", runId: "r1", queueFor, waiter });
    // The calls' adds go out in one script call, which Redis refuses as a whole; the second
    // call alone is aborted during the outage.
    const aborting = new AbortController();
    const executor: ToolExecutor = {
      execute: (prep, signal, emit, context) =>
        remote.execute(
          prep,
          prep.toolCall.id === "call_b" ? aborting.signal : signal,
          emit,
          context,
        ),
    };
    const admin = connectRedis(redis.url);
    await admin.config("SET", "maxmemory-policy", "noeviction");
    await admin.config("SET", "maxmemory", "1");
    setTimeout(() => aborting.abort(), 500);
    setTimeout(() => void admin.config("SET", "maxmemory", "0"), 1500);
    const calls = ["a", "b", "c"].map((n) => makeCall(`call_${n}`, "echo", { text: n }));
    const batch = await executeToolCalls(
      contextWith([echoTool]),
      assistantWith(calls),
      calls,
      { toolExecution: "parallel", executor },
      undefined,
      () => undefined,
    );
    admin.disconnect();
    expect(batch.messages.map((message) => message.isError)).toEqual([false, true, false]);
    expect(batch.messages[0]?.content).toEqual([{ type: "text", text: "echo: a" }]);
    expect(batch.messages[2]?.content).toEqual([{ type: "text", text: "echo: c" }]);
    const queue = await queueFor(undefined, "s-oom2");
    expect(await queue.getJobState(toolJobId("s-oom2", "r1", "call_b"))).toBe("unknown");
  });
});
