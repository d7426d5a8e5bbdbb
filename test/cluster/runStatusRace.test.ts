import { type RunStatus, YiemClient } from "@yiem/core";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let redis: TestRedis;
let client: YiemClient;
let worker: Worker;

beforeAll(async () => {
  redis = await startTestRedis();
  client = new YiemClient({ redis: redis.url, prefix: redis.prefix });
  // A plain BullMQ worker stands for a coordinator: it takes requests and completes them.
  worker = new Worker("coordinator", null, {
    connection: { url: redis.url, maxRetriesPerRequest: null },
    prefix: `${redis.prefix}:bull`,
  });
});

afterAll(async () => {
  await worker?.close();
  await client?.close();
  await redis?.stop();
});

/** Reads `requestId`'s status in a loop until `done` is set, keeping every reading. */
async function pollStatus(requestId: string, sessionId: string, done: { set: boolean }) {
  const seen: RunStatus[] = [];
  while (!done.set) seen.push(await client.runStatus(requestId, { sessionId }));
  seen.push(await client.runStatus(requestId, { sessionId }));
  return seen;
}

describe("a run's status while its job completes", () => {
  it("never reports a completed run without its answer, however the reads and the completion interleave", async () => {
    const readings: RunStatus[] = [];
    for (let i = 0; i < 40; i++) {
      const { requestId, sessionId } = await client.send(`question ${i}`);
      const token = `token-${i}`;
      const job = await worker.getNextJob(token);
      expect(job?.id).toBe(requestId);
      const done = { set: false };
      const polls = [0, 1, 2, 3].map(() => pollStatus(requestId, sessionId, done));
      await new Promise((resolve) => setTimeout(resolve, i % 5));
      const answer = { response: { text: `answer ${i}`, stopReason: "stop" }, requestId };
      await job?.moveToCompleted(answer, token, false);
      done.set = true;
      for (const seen of await Promise.all(polls)) readings.push(...seen);
      const last = await client.runStatus(requestId, { sessionId });
      expect(last).toMatchObject({ status: "completed", answer: { requestId } });
    }
    const completed = readings.filter((r) => r.status === "completed");
    expect(completed.length).toBeGreaterThan(0);
    for (const reading of completed) expect(reading.answer?.response).toBeDefined();
  });
});
