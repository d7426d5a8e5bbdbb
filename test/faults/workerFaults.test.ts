import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
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
      "final k2: ledgerNoRetry: the worker running this call stopped 1 times; giving up after 0 retries",
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
      note: "error result once the lost worker had one more lock duration to report, run completed",
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
      "final c3: crashWorker: the worker running this call stopped 2 times; giving up after 1 retries",
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
      note: "2 workers lost, then an error result; no endless requeue",
    });
    await cluster.addWorker();
    await cluster.addWorker();
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
    await new Promise((resolve) => setTimeout(resolve, 3500)); // the zombie finishes its sleep and tries to complete
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
});
