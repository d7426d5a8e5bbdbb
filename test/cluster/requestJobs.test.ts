/**
 * Request jobs added as the README shows, with plain bullmq and no options: the coordinator
 * removes them once their retention has passed (`YIEM_REQUEST_RETENTION_S`, 1 s here), and a
 * job without `sessionId` starts a session whose id nobody can guess, kept if the job is
 * delivered again.
 */
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import type { Job } from "bullmq";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Answer = { sessionId: string; runId: string };

/** How many model requests asked about "crash …" (the first one hangs). */
let crashRequests = 0;

/** "crash …": the first request hangs (its coordinator is killed meanwhile); otherwise "done". */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  if (last.startsWith("crash") && crashRequests++ === 0) return { kind: "hang" };
  return { kind: "text", text: `done: ${last}` };
}

/** The session id a job without one got before: sha256 of its sequential id and its millisecond. */
function guessableSessionId(jobId: string, createdAt: number): string {
  const hex = createHash("sha256").update(`${jobId}\n${createdAt}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const RETENTION_S = 1;

const cluster = useTestCluster({
  workers: 0,
  model: { respond },
  env: { YIEM_REQUEST_RETENTION_S: String(RETENTION_S) },
});

const plain = usePlainCoordinatorQueue(cluster);

/** Adds a request job as the README does (no options) and waits for its answer. */
async function ask(data: unknown): Promise<{ job: Job; answer: Answer }> {
  const job = await plain.queue.add("ask", data);
  const answer = (await job.waitUntilFinished(plain.events, 20_000)) as Answer;
  return { job, answer };
}

describe("request jobs added without options", () => {
  it("are removed once their retention has passed", async () => {
    const { job: first, answer } = await ask({ input: "first" });
    const kept = await plain.queue.getJob(first.id ?? "");
    expect(kept?.returnvalue).toEqual(answer); // kept, with its answer, until its retention passed
    await sleep(RETENTION_S * 1000 + 500);
    // BullMQ removes finished jobs past their age when another job finishes: the next one.
    const { job: next } = await ask({ input: "next" });
    expect(await plain.queue.getJob(first.id ?? "")).toBeUndefined();
    expect(await plain.queue.getJob(next.id ?? "")).toBeDefined();
  });
});

describe("the session of a job without sessionId", () => {
  it("is random: not derived from the job's sequential id and creation time", async () => {
    const answers = await Promise.all([ask({ input: "one" }), ask({ input: "two" })]);
    for (const { job, answer } of answers) {
      expect(answer.sessionId).toMatch(UUID_V4);
      expect(answer.sessionId).not.toBe(guessableSessionId(job.id ?? "", job.timestamp));
    }
    expect(answers[0]?.answer.sessionId).not.toBe(answers[1]?.answer.sessionId);
    // A client that did not send the job finds its session in the job, and so its response.
    const response = await cluster.client.waitForResponse(answers[0]?.job.id ?? "", {
      timeoutMs: 10_000,
    });
    expect(response.content).toEqual([{ type: "text", text: "done: one" }]);
  });

  it("is left alone for a job that names its session, even when its input quotes the word", async () => {
    const hashOf = (job: Job) => `${cluster.redis.prefix}:bull:coordinator:${job.id}`;
    const named = await ask({ input: "hi", sessionId: `named-${Date.now()}` });
    expect(named.answer.sessionId).toMatch(/^named-/);
    expect(await plain.connection.hget(hashOf(named.job), "yiemSessionId")).toBeNull();
    // An input that quotes "sessionId" names no session: the job still gets a random one.
    const quoted = await ask({ input: 'what is a "sessionId"?' });
    expect(quoted.answer.sessionId).toMatch(UUID_V4);
    expect(await plain.connection.hget(hashOf(quoted.job), "yiemSessionId")).toBe(
      quoted.answer.sessionId,
    );
  });

  it("stays the same when the job is delivered again after its coordinator died", async () => {
    const job = await plain.queue.add("ask", { input: "crash r1" });
    while (crashRequests === 0) await sleep(50); // the run is on the model: the input is recorded
    const field = await plain.connection.hget(
      `${cluster.redis.prefix}:bull:coordinator:${job.id}`,
      "yiemSessionId",
    );
    expect(field).toMatch(UUID_V4);
    const [first] = cluster.coordinators;
    first?.signal("SIGKILL");
    await first?.exited;
    await cluster.addCoordinator();
    const answer = (await job.waitUntilFinished(plain.events, 30_000)) as Answer;
    expect(crashRequests).toBe(2); // asked again by the coordinator that took the job over
    expect(answer.sessionId).toBe(field);
    const messages = await cluster.client.messages(answer.sessionId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
