/**
 * Request jobs added as the README shows, with plain bullmq and no options: the coordinator
 * removes them once their retention has passed (`YIEM_REQUEST_RETENTION_S`, 1 s here).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Job, Queue, QueueEvents } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  openPlainCoordinatorQueue,
  type PlainCoordinatorQueue,
} from "../support/plainCoordinatorQueue.js";
import type { ScriptedReply } from "../support/scriptedModelServer.js";

type Answer = { sessionId: string; runId: string };

function respond(): ScriptedReply {
  return { kind: "text", text: "done" };
}

const RETENTION_S = 1;

const cluster = useTestCluster({
  workers: 0,
  model: { respond },
  env: { YIEM_REQUEST_RETENTION_S: String(RETENTION_S) },
});

let plain: PlainCoordinatorQueue;
let queue: Queue;
let events: QueueEvents;

beforeAll(async () => {
  plain = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
  ({ queue, events } = plain);
});

afterAll(async () => {
  await plain.close();
});

/** Adds a request job as the README does (no options) and waits for its answer. */
async function ask(data: unknown): Promise<{ job: Job; answer: Answer }> {
  const job = await queue.add("ask", data);
  const answer = (await job.waitUntilFinished(events, 20_000)) as Answer;
  return { job, answer };
}

describe("request jobs added without options", () => {
  it("are removed once their retention has passed", async () => {
    const { job: first } = await ask({ input: "first" });
    expect(await queue.getJob(first.id ?? "")).toBeDefined(); // kept until its retention passed
    await sleep(RETENTION_S * 1000 + 500);
    // BullMQ removes finished jobs past their age when another job finishes: the next one.
    const { job: next } = await ask({ input: "next" });
    expect(await queue.getJob(first.id ?? "")).toBeUndefined();
    expect(await queue.getJob(next.id ?? "")).toBeDefined();
  });
});
