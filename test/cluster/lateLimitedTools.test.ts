import {
  type AgentTool,
  registerTool,
  startToolWorker,
  ToolStore,
  type ToolWorkerHandle,
} from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";

/** A tool `name` that answers `answer`. */
function answering(name: string, answer: string): AgentTool {
  return {
    name,
    label: name,
    description: `answers ${answer}`,
    inputSchema: { type: "object", properties: {} },
    execute: () => ({ content: [{ type: "text", text: answer }], details: {} }),
  };
}

/** Calls the tool the question names, then echoes its result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: String(last.content) };
  return { kind: "toolCalls", calls: [{ id: "c1", name: String(last?.content), arguments: {} }] };
}

// The coordinator has no tools of its own: it runs what the worker announces.
const local = useInProcessCoordinator({ respond, tools: [], storeName: "lateLimitedCoordinator" });

const workerStore = new ToolStore({ name: "lateLimitedWorker" });
let worker: ToolWorkerHandle | undefined;

beforeAll(async () => {
  registerTool(workerStore, answering("plainTool", "plain"));
  worker = await startToolWorker({
    redis: local.redis.url,
    prefix: local.redis.prefix,
    toolStore: workerStore,
    workerId: "late-limits",
  });
});

afterAll(async () => {
  await worker?.close();
});

/** The answer text to `question`. */
async function answerTo(question: string): Promise<string> {
  const { runId } = await local.client.send(question);
  const response = await local.client.waitForResponse(runId, { timeoutMs: 8_000 });
  return response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
}

/** Asks `question` until the coordinator knows the tool (its answer is no "not found"). */
async function answerOnceKnown(question: string): Promise<string> {
  for (let tries = 0; tries < 40; tries++) {
    const answer = await answerTo(question);
    if (!answer.includes("not found")) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the coordinator never learned of ${question}`);
}

/** The queues the worker's announcement lists, once `check` holds for them (at most 5 s). */
async function announcedQueues(check: (queues: string[]) => boolean): Promise<string[]> {
  for (let tries = 0; tries < 50; tries++) {
    const info = (await local.client.workers()).find((w) => w.workerId === "late-limits");
    if (info && check(info.queues)) return info.queues;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the announced queues did not follow the store");
}

describe("a worker follows its tool store's limited tools", () => {
  it("serves the own queue of a limited tool registered after its start, runs its calls, and closes the queue when the tool goes", async () => {
    expect(await announcedQueues(() => true)).toEqual(["default"]);
    registerTool(workerStore, { ...answering("lateLimited", "limited ran"), concurrency: 1 });
    registerTool(workerStore, {
      ...answering("lateRated", "rated ran"),
      rateLimit: { max: 5, durationMs: 1000 },
    });
    expect(await answerOnceKnown("lateLimited")).toBe("limited ran");
    expect(await answerOnceKnown("lateRated")).toBe("rated ran");
    expect(await announcedQueues((q) => q.length === 3)).toEqual([
      "default",
      "tool.lateLimited",
      "tool.lateRated",
    ]);
    workerStore.tools.delete("lateRated");
    await announcedQueues((q) => !q.includes("tool.lateRated"));
    expect(await answerTo("plainTool")).toBe("plain");
  });
});
