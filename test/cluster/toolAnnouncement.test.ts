import {
  type AgentTool,
  registerTool,
  startToolWorker,
  ToolStore,
  type ToolWorkerHandle,
} from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useInProcessCoordinator } from "../support/inProcessCoordinator.js";

/** A tool `name` that answers `answer` (described as `description`). */
function answering(name: string, answer: string, description: string): AgentTool {
  return {
    name,
    label: name,
    description,
    inputSchema: { type: "object", properties: {} },
    execute: () => ({ content: [{ type: "text", text: answer }], details: {} }),
  };
}

/** Calls the tool the question names (one sequential call), then echoes its result. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: String(last.content) };
  return { kind: "toolCalls", calls: [{ id: "c1", name: String(last?.content), arguments: {} }] };
}

const local = useInProcessCoordinator({
  respond,
  tools: [answering("sameName", "ran on the coordinator", "the coordinator's own")],
  storeName: "announcementCoordinator",
});

const workerStore = new ToolStore({ name: "announcementWorker" });
let worker: ToolWorkerHandle | undefined;

beforeAll(async () => {
  registerTool(workerStore, answering("sameName", "ran on a worker", "the worker's"));
  registerTool(workerStore, answering("workerOnly", "ran only on a worker", "the worker's only"));
  worker = await startToolWorker({
    redis: local.redis.url,
    prefix: local.redis.prefix,
    toolStore: workerStore,
    workerId: "announcer",
  });
});

afterAll(async () => {
  await worker?.close();
});

/** Polls the registry until `check` holds for the announcer's tools (at most 5 s). */
async function untilAnnounced(check: (digests: Record<string, string>) => boolean) {
  for (let tries = 0; tries < 50; tries++) {
    const workers = await local.client.workers();
    const digests = workers.find((w) => w.workerId === "announcer")?.toolDigests ?? {};
    if (check(digests)) return digests;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the announcement did not follow the store");
}

/** The answer text to `question`. */
async function answerTo(question: string): Promise<string> {
  const { runId } = await local.client.send(question);
  const response = await local.client.waitForResponse(runId, { timeoutMs: 10_000 });
  return response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
}

/** Asks `question` until the answer is `expected` (at most about 5 s). */
async function untilAnswered(question: string, expected: string): Promise<void> {
  let answer = "";
  for (let tries = 0; tries < 20 && answer !== expected; tries++) {
    answer = await answerTo(question);
    if (answer !== expected) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(answer).toBe(expected);
}

describe("a worker announces its tool store as it changes", () => {
  it("announces a tool registered while it runs within one refresh, and drops a removed one", async () => {
    registerTool(workerStore, answering("lateTool", "late", "registered after the start"));
    const digests = await untilAnnounced((tools) => "lateTool" in tools); // a refresh is 2 s
    expect(digests.lateTool).toMatch(/^[0-9a-f]{32}$/);
    workerStore.tools.delete("lateTool");
    await untilAnnounced((tools) => !("lateTool" in tools));
  });

  it("sets the limit of a limited tool that appears on a running worker on its queue", async () => {
    const limited = { ...answering("lateLimited", "limited", "limited later"), concurrency: 2 };
    registerTool(workerStore, limited); // after the worker's start, which set the limits it had
    const queue = new Queue("tools-tool.lateLimited", {
      connection: { host: "127.0.0.1", port: Number(new URL(local.redis.url).port) },
      prefix: `${local.redis.prefix}:bull`,
    });
    let stored: number | null = null;
    for (let tries = 0; tries < 50 && stored === null; tries++) {
      stored = await queue.getGlobalConcurrency();
      if (stored === null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await queue.close();
    workerStore.tools.delete("lateLimited");
    expect(stored).toBe(2);
  });

  it("keeps the coordinator's own tool over an announced one of the same name", async () => {
    // The coordinator has read the announcement once the worker's other tool answers.
    await untilAnswered("workerOnly", "ran only on a worker");
    expect(await answerTo("sameName")).toBe("ran on the coordinator");
    const tools = (local.model.requests.at(-2)?.body.tools ?? []) as Array<{
      function: { name: string; description: string };
    }>;
    const offered = tools.filter((t) => t.function.name === "sameName");
    expect(offered.map((t) => t.function.description)).toEqual(["the coordinator's own"]);
  });
});
