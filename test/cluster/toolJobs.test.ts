import { randomUUID } from "node:crypto";
import type { BusEvent, ToolJobResult } from "@yiem/core";
import { toolJobId, toolQueueName } from "@yiem/core/internal";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { type Job, Queue, Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { useLedgerCluster } from "../support/faults.js";

type Wire = { role: string; content: unknown };

/**
 * `ledger <label>`: one ledgerRemote call `<label>-1`; `wait <label>`: one waitForAbort call
 * `<label>-1`; `mixed <label>`: `<label>-fast` on the queue nobody serves (the test completes
 * it) and `<label>-wait` (waitForAbort). Once results are in: `final <label>: <results>`.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const [kind = "", label = "x"] = String(lastUser?.content ?? "").split(" ");
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: `final ${label}: ${results.join(" | ")}` };
  }
  if (kind === "ledger") {
    const args = { label: `${label}-1`, ms: 50 };
    return {
      kind: "toolCalls",
      calls: [{ id: `${label}-1`, name: "ledgerRemote", arguments: args }],
    };
  }
  if (kind === "wait") {
    const args = { label: `${label}-1` };
    return {
      kind: "toolCalls",
      calls: [{ id: `${label}-1`, name: "waitForAbort", arguments: args }],
    };
  }
  return {
    kind: "toolCalls",
    calls: [
      { id: `${label}-fast`, name: "unservedQueue", arguments: {} },
      { id: `${label}-wait`, name: "waitForAbort", arguments: { label: `${label}-wait` } },
    ],
  };
}

// Bull Board's view of completed tool jobs (retry, clean): kept, as the setting allows (by
// default they are removed as they complete: test/cluster/toolJobRetention.test.ts).
const { cluster, ledger } = useLedgerCluster({
  workers: 2,
  model: { respond },
  env: { YIEM_TOOL_JOB_RETENTION_S: "3600" },
});

const queues = new Map<string, Queue>();

/** The BullMQ queue of a tool queue, as Bull Board sees it. */
function toolQueue(name: string): Queue {
  const existing = queues.get(name);
  if (existing) return existing;
  const queue = new Queue(toolQueueName(name), {
    connection: { url: cluster.redis.url },
    prefix: `${cluster.redis.prefix}:bull`,
  });
  queues.set(name, queue);
  return queue;
}

afterAll(async () => {
  await Promise.all([...queues.values()].map((queue) => queue.close()));
});

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((block) => block.text ?? "").join("");
}

/** Polls `read` until it gives a value, or fails after `timeoutMs`. */
async function waitUntil<T>(
  what: string,
  read: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The job of call `callId` once it has finished (completed or failed), freshly read. */
async function finishedJob(queue: Queue, jobId: string): Promise<Job> {
  return waitUntil(`job ${jobId} to finish`, async () => {
    // One read of the job hash: `finishedOn` is written with the result or failure, so the
    // returned job never has a state newer than its fields.
    const job = await queue.getJob(jobId);
    return job?.finishedOn ? job : undefined;
  });
}

/** Every event stored for the session so far (reading stops after a quiet second). */
async function storedEvents(sessionId: string): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  const signal = AbortSignal.timeout(1000);
  for await (const event of cluster.client.events(sessionId, { fromStart: true, signal }))
    events.push(event);
  return events;
}

/** Sends `text` to a new session and resolves once call `callId` reported from its worker. */
async function sendAndWaitForUpdate(
  text: string,
  callId: string,
): Promise<{ sessionId: string; runId: string }> {
  const sessionId = randomUUID();
  const updated = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true }))
      if (event.type === "toolExecUpdate" && event.toolCallId === callId) return;
  })();
  const { runId } = await cluster.client.send(text, { sessionId });
  await updated;
  return { sessionId, runId };
}

/** Retries a finished job as Bull Board's retry button does, and resolves with how it ended again. */
async function retryLikeBullBoard(queue: Queue, job: Job): Promise<Job> {
  const state = await job.getState();
  await job.retry(state === "failed" ? "failed" : "completed");
  return finishedJob(queue, job.id ?? "");
}

/** Aborts the session and expects its run to end as aborted. */
async function abortAndWait(sessionId: string, runId: string): Promise<void> {
  await cluster.client.abort(sessionId);
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
  expect(response.stopReason).toBe("aborted");
}

describe("tool jobs on Bull Board", () => {
  it("a retried completed tool job is refused and the tool does not run again", async () => {
    const sessionId = randomUUID();
    const { runId } = await cluster.client.send("ledger rc", { sessionId });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(textOf(response)).toBe("final rc: rc-1 recorded");
    const transcript = await cluster.client.messages(sessionId);
    const events = await storedEvents(sessionId);
    const queue = toolQueue("default");
    const job = (await queue.getJobs(["completed"])).find(
      (j) => j.id === toolJobId(sessionId, runId, "rc-1"),
    );
    if (!job) throw new Error("no completed job for rc-1");
    const again = await retryLikeBullBoard(queue, job);
    expect(await again.getState()).toBe("failed");
    expect(again.failedReason).toBe(
      `refused: tool call rc-1 of session ${sessionId} already finished; a retry would run its side effects twice`,
    );
    expect((await queue.getJobLogs(job.id ?? "")).logs).toContain(again.failedReason);
    expect((await ledger.countsByCall()).get("rc-1")).toBe(1);
    expect(await cluster.client.messages(sessionId)).toEqual(transcript);
    expect(await storedEvents(sessionId)).toEqual(events);
  });

  it("a retried failed (aborted) tool job is refused and the tool does not run again", async () => {
    const { sessionId, runId } = await sendAndWaitForUpdate("wait rf", "rf-1");
    await abortAndWait(sessionId, runId);
    const queue = toolQueue("default");
    const job = await finishedJob(queue, toolJobId(sessionId, runId, "rf-1"));
    expect(job.failedReason).toBe("aborted");
    const transcript = await cluster.client.messages(sessionId);
    const events = await storedEvents(sessionId);
    const again = await retryLikeBullBoard(queue, job);
    expect(again.failedReason).toMatch(/^refused: tool call rf-1 of session .+ already finished/);
    const runs = (await ledger.entries()).filter((e) => e.label === "rf-1");
    expect(runs).toHaveLength(1); // waitForAbort records the abort of its one run
    expect(await cluster.client.messages(sessionId)).toEqual(transcript);
    expect(await storedEvents(sessionId)).toEqual(events);
  });

  it("an aborted tool call ends as a failed job with reason aborted", async () => {
    const { sessionId, runId } = await sendAndWaitForUpdate("wait ab", "ab-1");
    await abortAndWait(sessionId, runId);
    const job = await finishedJob(toolQueue("default"), toolJobId(sessionId, runId, "ab-1"));
    expect(await job.getState()).toBe("failed");
    expect(job.failedReason).toBe("aborted");
    expect(job.attemptsMade).toBe(1); // failed for good, not retried
    const results = (await cluster.client.messages(sessionId)).filter(
      (m) => m.role === "toolResult",
    );
    expect(results.map((m) => [m.toolCallId, textOf(m)])).toEqual([["ab-1", "Operation aborted"]]);
  });

  it("abort leaves completed jobs in place", async () => {
    const { sessionId, runId } = await sendAndWaitForUpdate("mixed lc", "lc-wait");
    const fastId = toolJobId(sessionId, runId, "lc-fast");
    const nobody = toolQueue("nobody");
    await waitUntil("the fast job", async () =>
      (await nobody.getJobState(fastId)) === "waiting" ? true : undefined,
    );
    const standIn = new Worker<unknown, ToolJobResult>(toolQueueName("nobody"), undefined, {
      connection: { url: cluster.redis.url },
      prefix: `${cluster.redis.prefix}:bull`,
    });
    await standIn.waitUntilReady();
    // The coordinator is paused so the abort reaches it before the fast call's completion:
    // the abort then finds a job that has completed but whose result it has not seen yet.
    const coordinator = cluster.coordinators[0];
    coordinator?.signal("SIGSTOP");
    try {
      await cluster.client.abort(sessionId);
      const token = randomUUID();
      const job = await standIn.getNextJob(token);
      expect(job?.id).toBe(fastId);
      const value: ToolJobResult = {
        result: { content: [{ type: "text", text: "fast done" }], details: {} },
        isError: false,
        workerId: "stand-in",
        durationMs: 0,
      };
      await job?.moveToCompleted(value, token, false);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the worker fails lc-wait
    } finally {
      coordinator?.signal("SIGCONT");
      await standIn.close();
    }
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("aborted");
    expect(await nobody.getJobState(fastId)).toBe("completed");
    const waitJob = await finishedJob(toolQueue("default"), toolJobId(sessionId, runId, "lc-wait"));
    expect(waitJob.failedReason).toBe("aborted");
  });
});
