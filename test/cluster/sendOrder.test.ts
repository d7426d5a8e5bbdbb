/**
 * Sends keep their order in a session even when the coordinator that fetched the older one
 * records it late (a loaded coordinator): a newer input, plain or follow-up, does not open a
 * run before every request sent before it is recorded. Seen under load as a follow-up's run
 * opening first and taking the older input into it (two user messages, one answer), or the
 * older input answered after the newer one. Here the older request's job is held back with
 * plain BullMQ (taken out of the queue, added again a second later), as a slow coordinator
 * would hold it.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import type { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

/** Answers with the last user message's text. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.findLast((m) => m.role === "user");
  return { kind: "text", text: `answer to ${String(last?.content)}` };
}

const cluster = useTestCluster({ workers: 1, coordinators: 2, model: { respond } });
const plain = usePlainCoordinatorQueue(cluster);

/** Takes the job out of the queue and gives back what adds it again as it was. */
async function holdBack(job: Job): Promise<() => Promise<void>> {
  const { name, data, opts } = job;
  await job.remove();
  return async () => {
    await plain.queue.add(name, data, { ...opts, jobId: job.id });
  };
}

/** The user messages and answers of the session, in transcript order. */
async function turnsOf(sessionId: string): Promise<string[]> {
  const messages = await cluster.client.messages(sessionId);
  return messages.flatMap((m) => {
    if (m.role === "user")
      return [
        `user: ${typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")}`,
      ];
    if (m.role === "assistant")
      return m.content.flatMap((b) => (b.type === "text" ? [`model: ${b.text}`] : []));
    return [];
  });
}

describe("the order of sends in a session", () => {
  it("runs a follow-up after the input sent before it, when that input's coordinator records it a second late", async () => {
    const sessionId = randomUUID();
    await plain.queue.pause();
    const first = await cluster.client.send("first", { sessionId });
    const second = await cluster.client.send("second", { sessionId, followUp: true });
    const firstJob = await plain.queue.getJob(first.runId);
    if (!firstJob) throw new Error("the first request's job is not in the queue");
    const addFirstAgain = await holdBack(firstJob);
    await plain.queue.resume();
    // The follow-up is fetched and recorded now; the older input only a second later.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await addFirstAgain();
    const answers = await Promise.all([
      cluster.client.waitForResponse(first.runId, { timeoutMs: 20_000 }),
      cluster.client.waitForResponse(second.runId, { timeoutMs: 20_000 }),
    ]);
    expect(answers.map((a) => a.content)).toEqual([
      [{ type: "text", text: "answer to first" }],
      [{ type: "text", text: "answer to second" }],
    ]);
    expect(await turnsOf(sessionId)).toEqual([
      "user: first",
      "model: answer to first",
      "user: second",
      "model: answer to second",
    ]);
  });

  it("opens the next run anyway once a request sent before it was never recorded", async () => {
    const sessionId = randomUUID();
    await plain.queue.pause();
    const lost = await cluster.client.send("lost", { sessionId });
    const next = await cluster.client.send("next", { sessionId, followUp: true });
    await (await plain.queue.getJob(lost.runId))?.remove();
    await plain.queue.resume();
    const answer = await cluster.client.waitForResponse(next.runId, { timeoutMs: 20_000 });
    expect(answer.content).toEqual([{ type: "text", text: "answer to next" }]);
    expect(await turnsOf(sessionId)).toEqual(["user: next", "model: answer to next"]);
  });
});
