import { randomUUID } from "node:crypto";
import { type BusEvent, clusterKeys } from "@yiem/core";
import { toolJobId, toolQueueName } from "@yiem/core/internal";
import type { TestProcess } from "@yiem/testing";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

const { cluster, ledger } = useLedgerCluster({
  workers: 3,
  model: { respond: faultModel },
});

/** Sends `text` and resolves with the worker process running the call `callId` (from its first update). */
async function sendAndFindWorker(
  text: string,
  callId: string,
): Promise<{ runId: string; sessionId: string; worker: TestProcess }> {
  const sessionId = randomUUID();
  const found = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
      if (event.type === "toolExecUpdate" && event.toolCallId === callId) return event as BusEvent;
    }
  })();
  const { runId } = await cluster.client.send(text, { sessionId });
  const update = await found;
  const worker = cluster.workers.find((w) =>
    w.lines.some((l) => l.includes(`"workerId":"${update?.workerId}"`)),
  );
  if (!worker) throw new Error(`no worker process for ${update?.workerId}`);
  return { runId, sessionId, worker };
}

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? "").join("");
}

async function toolResults(sessionId: string) {
  return (await cluster.client.messages(sessionId)).filter((m) => m.role === "toolResult");
}

/** Resolves once tool job `jobId` was handed out again after its worker lost it (plain BullMQ). */
async function handedOutAgain(jobId: string): Promise<void> {
  const queue = new Queue(toolQueueName("default"), {
    connection: { url: cluster.redis.url },
    prefix: `${cluster.redis.prefix}:bull`,
  });
  try {
    for (;;) {
      const job = await queue.getJob(jobId);
      if ((job?.attemptsStarted ?? 0) >= 2) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await queue.close();
  }
}

/**
 * Resolves once tool job `jobId`, added already, has finished (BullMQ stored its end, or
 * removed it as it completed: `YIEM_TOOL_JOB_RETENTION_S` 0), read with plain BullMQ.
 */
async function jobFinished(jobId: string): Promise<void> {
  const queue = new Queue(toolQueueName("default"), {
    connection: { url: cluster.redis.url },
    prefix: `${cluster.redis.prefix}:bull`,
  });
  try {
    for (;;) {
      const job = await queue.getJob(jobId);
      if (!job || job.finishedOn) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await queue.close();
  }
}

/** Resolves once the finished marker of job `jobId` holds a result whose text is `text` (the zombie's, late). */
async function zombieRecorded(jobId: string, text: string): Promise<void> {
  const redis = cluster.connectRedis();
  try {
    for (;;) {
      const marker = await redis.get(
        clusterKeys(cluster.redis.prefix).toolDone("tools-default", jobId),
      );
      if (marker?.includes(JSON.stringify(text))) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * Resolves once `worker` (a zombie woken with SIGCONT, its sleep long over) finished the call
 * of tool job `jobId` and tried to complete the job: BullMQ refused, its lock being gone, or
 * the job itself (the other worker's completion removed it: `YIEM_TOOL_JOB_RETENTION_S` 0).
 */
async function completionRefused(worker: TestProcess, jobId: string): Promise<void> {
  await worker.waitForLine(
    (line) =>
      line.includes(`Missing lock for job ${jobId}`) ||
      line.includes(`Missing key for job ${jobId}`),
    15_000,
  );
}

/** The text of the tool message for call `callId` the model was sent (the scripted model's requests). */
function toolTextSentToModel(callId: string): string | undefined {
  for (const request of cluster.model.requests) {
    const messages = (request.body.messages ?? []) as Array<Record<string, unknown>>;
    const sent = messages.find((m) => m.role === "tool" && m.tool_call_id === callId);
    if (sent) return String(sent.content);
  }
  return undefined;
}

describe("faults: tool workers die", () => {
  it("retries a call whose worker was SIGKILLed mid-call on another worker, and the run completes", async () => {
    const { runId, sessionId, worker } = await sendAndFindWorker("ledgerRemote k1 2500", "k1-1");
    const killedAt = Date.now();
    worker.signal("SIGKILL");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    const recoveryMs = Date.now() - killedAt;
    expect(textOf(response)).toBe("final k1: k1-1 recorded");
    const runs = (await ledger.entries()).filter((e) => e.callId === "k1-1");
    expect(runs).toHaveLength(2);
    expect(runs[0]?.pid).toBe(worker.pid);
    expect(runs[1]?.pid).not.toBe(worker.pid);
    expect(await toolResults(sessionId)).toHaveLength(1);
    await recordFigure({
      scenario: "worker SIGKILLed mid-call, retried",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      recoveryMs,
      note: "retries: 1; the call ran again on another worker",
    });
    await cluster.addWorker();
  });

  it("gives an error result once a dead worker's call has no retries left, and the run completes", async () => {
    const { runId, sessionId, worker } = await sendAndFindWorker("ledgerNoRetry k2 2500", "k2-1");
    const killedAt = Date.now();
    worker.signal("SIGKILL");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe(
      "final k2: ledgerNoRetry: the worker running this call stopped answering; the call may have run: check before repeating it (stopped 1 times, retries: 0)",
    );
    expect((await ledger.countsByCall()).get("k2-1")).toBe(1);
    const [result] = await toolResults(sessionId);
    expect(result?.role === "toolResult" && result.isError).toBe(true);
    await recordFigure({
      scenario: "worker SIGKILLed mid-call, no retries left",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      recoveryMs: Date.now() - killedAt,
      note: "'may have run' once the lost worker had one more lock duration and the coordinator its grace to report; run completed",
    });
    await cluster.addWorker();
  });

  it("stops requeueing a tool that crashes its worker every time: an error result after its retries", async () => {
    const before = cluster.workers.filter(
      (w) => w.child.exitCode === null && w.child.signalCode === null,
    ).length;
    const { runId } = await cluster.client.send("crashWorker c3");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
    expect(textOf(response)).toBe(
      "final c3: crashWorker: the worker running this call stopped answering; the call may have run: check before repeating it (stopped 2 times, retries: 1)",
    );
    expect((await ledger.countsByCall()).get("c3-1")).toBe(2);
    const alive = cluster.workers.filter(
      (w) => w.child.exitCode === null && w.child.signalCode === null,
    ).length;
    expect(before - alive).toBe(2);
    await recordFigure({
      scenario: "tool crashes its worker every time",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "2 workers lost, then a 'may have run' result; no endless requeue",
    });
    await Promise.all([cluster.addWorker(), cluster.addWorker()]);
  }, 120_000);

  it("gives the model a stopped worker's real result when it wakes up after its call was handed out again with no retries left", async () => {
    const { runId, sessionId, worker } = await sendAndFindWorker("ledgerNoRetry z5 1000", "z5-1");
    worker.signal("SIGSTOP");
    await handedOutAgain(toolJobId(sessionId, runId, "z5-1"));
    worker.signal("SIGCONT"); // its sleep is long over: it finishes the call at once
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final z5: z5-1 recorded");
    const runs = (await ledger.entries()).filter((e) => e.callId === "z5-1");
    expect(runs.map((r) => r.pid)).toEqual([worker.pid]);
    const results = await toolResults(sessionId);
    expect(results.map((m) => m.role === "toolResult" && m.isError)).toEqual([false]);
    expect(worker.child.exitCode).toBeNull();
    await recordFigure({
      scenario: "zombie worker, no retries left (SIGSTOP past its lock, SIGCONT)",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "1 execution; the model read its real result, not 'giving up'",
    });
  });

  it("records exactly one result when a zombie worker wakes up after another worker finished its call", async () => {
    const { runId, sessionId, worker } = await sendAndFindWorker("ledgerRemote z4 2500", "z4-1");
    worker.signal("SIGSTOP");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    worker.signal("SIGCONT");
    await completionRefused(worker, toolJobId(sessionId, runId, "z4-1"));
    expect(textOf(response)).toBe("final z4: z4-1 recorded");
    const results = await toolResults(sessionId);
    expect(results).toHaveLength(1);
    expect(worker.child.exitCode).toBeNull(); // the zombie lives on
    const runs = (await ledger.entries()).filter((e) => e.callId === "z4-1");
    expect(runs.map((r) => r.pid)).toContain(worker.pid);
    await recordFigure({
      scenario: "zombie worker (SIGSTOP past its lock, SIGCONT)",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: `${runs.length} executions, 1 recorded result; the late one dropped`,
    });
  });

  it("gives the model a stopped worker's real result when it wakes up just after its call was given up", async () => {
    const { runId, sessionId, worker } = await sendAndFindWorker("ledgerNoRetry z6 1000", "z6-1");
    worker.signal("SIGSTOP");
    await jobFinished(toolJobId(sessionId, runId, "z6-1")); // its new holder gave it up
    worker.signal("SIGCONT"); // its sleep is long over: it finishes the call at once
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(toolTextSentToModel("z6-1")).toBe("z6-1 recorded");
    expect(textOf(response)).toBe("final z6: z6-1 recorded");
    const runs = (await ledger.entries()).filter((e) => e.callId === "z6-1");
    expect(runs.map((r) => r.pid)).toEqual([worker.pid]);
    const results = await toolResults(sessionId);
    expect(results.map((m) => m.role === "toolResult" && m.isError)).toEqual([false]);
    await recordFigure({
      scenario: "zombie worker woken after its call was given up (SIGSTOP past its lock, SIGCONT)",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "1 execution; the model read its real result (the coordinator's grace saw its marker)",
    });
  });

  it("tells the model a call may have run when its stopped worker stays silent past the grace", async () => {
    const { runId, sessionId, worker } = await sendAndFindWorker("ledgerNoRetry z7 1000", "z7-1");
    worker.signal("SIGSTOP");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
    worker.signal("SIGCONT"); // it wakes after the model was answered, and finishes the call
    const mayHaveRun =
      "ledgerNoRetry: the worker running this call stopped answering; the call may have run: check before repeating it";
    expect(toolTextSentToModel("z7-1")).toMatch(new RegExp(`^${mayHaveRun}`));
    expect(textOf(response)).toMatch(new RegExp(`^final z7: ${mayHaveRun}`));
    const [result, ...others] = await toolResults(sessionId);
    expect(others).toEqual([]);
    expect(result?.role === "toolResult" && [result.isError, result.details]).toEqual([
      true,
      expect.objectContaining({ mayHaveRun: true }),
    ]);
    await zombieRecorded(toolJobId(sessionId, runId, "z7-1"), "z7-1 recorded");
    expect((await ledger.entries()).filter((e) => e.callId === "z7-1").map((r) => r.pid)).toEqual([
      worker.pid,
    ]);
    expect(await toolResults(sessionId)).toHaveLength(1);
    expect(worker.child.exitCode).toBeNull();
    await recordFigure({
      scenario: "zombie worker silent past the coordinator's grace (SIGSTOP past its lock)",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "1 execution; the model read 'may have run', not a plain failure; the late result stayed out of the transcript",
    });
  }, 60_000);
});
