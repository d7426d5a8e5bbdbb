import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
import type { TestProcess } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { leaseHolderPid, recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

/**
 * The production lock, stalled check and lease (30 s, 30 s, 10 s), not the fault suite's short
 * ones: only the failure detector can bring these runs back within `ANSWER_WITHIN_MS`.
 */
const PRODUCTION_TIMERS = {
  YIEM_LEASE_MS: "10000",
  YIEM_LOCK_MS: "30000",
  YIEM_STALLED_INTERVAL_MS: "30000",
};

/**
 * How long a run may take to answer after its process was killed: less than the 30 s lock a
 * dead process's jobs wait for without the detector (plus the stalled check's up to 30 s).
 */
const ANSWER_WITHIN_MS = 20_000;

const { cluster, ledger } = useLedgerCluster({
  workers: 2,
  coordinators: 2,
  model: { respond: faultModel },
  env: PRODUCTION_TIMERS,
  launch: "compiled", // started and restarted in seconds on a busy machine
  readyTimeoutMs: 180_000,
});

/** Runs `text` on a new session; `onEvent` sees each of its events until it returns true. */
async function sendWatching(
  text: string,
  onEvent: (event: BusEvent) => Promise<boolean> | boolean,
) {
  const sessionId = randomUUID();
  const watched = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true }))
      if (await onEvent(event)) return;
  })();
  const { runId } = await cluster.client.send(text, { sessionId });
  await watched;
  return { runId, sessionId };
}

/** The coordinator process holding the session's lease. */
async function holderOf(sessionId: string): Promise<TestProcess> {
  const pid = await leaseHolderPid(cluster.redis.url, cluster.redis.prefix, sessionId);
  const holder = cluster.coordinators.find((c) => c.pid === pid && c.child.exitCode === null);
  if (!holder) throw new Error(`no coordinator holds ${sessionId} (lease pid ${pid})`);
  return holder;
}

/** The worker process running call `callId` (from the pid in its first partial result). */
function workerOf(event: BusEvent): TestProcess | undefined {
  const details = (event as { partialResult?: { pid?: number } }).partialResult;
  return cluster.workers.find((w) => w.pid === details?.pid);
}

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? "").join("");
}

async function executionsOf(callId: string) {
  return (await ledger.entries()).filter((e) => e.callId === callId);
}

async function toolResults(sessionId: string) {
  return (await cluster.client.messages(sessionId)).filter((m) => m.role === "toolResult");
}

describe("faults: the failure detector, on the production lock and lease", () => {
  it("resumes a run whose coordinator was SIGKILLed on the other coordinator, each tool once", async () => {
    let killedAt = 0;
    const { runId, sessionId } = await sendWatching("ledgerRemote d1 300 2", async (event) => {
      if (event.type !== "toolExecStart") return false;
      const holder = await holderOf(event.sessionId ?? "");
      killedAt = Date.now();
      holder.signal("SIGKILL");
      await holder.exited;
      return true;
    });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: ANSWER_WITHIN_MS });
    const recoveryMs = Date.now() - killedAt;
    expect(textOf(response)).toBe("final d1: d1-1 recorded | d1-2 recorded");
    expect(await executionsOf("d1-1")).toHaveLength(1);
    expect(await executionsOf("d1-2")).toHaveLength(1);
    expect(await toolResults(sessionId)).toHaveLength(2);
    await recordFigure({
      ...{ scenario: "coordinator SIGKILLed, production lock and lease (failure detector)" },
      ...{ runs: 1, calls: 2, lost: 0, duplicated: 0, recoveryMs },
      note: "30 s lock, 30 s stalled check, 10 s lease; the other coordinator resumed the run once the dead one's heartbeat ran out",
    });
    await cluster.addCoordinator(); // the SIGSTOP scenario below needs two
  }, 120_000);

  it("hands a SIGKILLed worker's call (retries: 1) to another worker, which answers it", async () => {
    let killed: TestProcess | undefined;
    let killedAt = 0;
    const { runId, sessionId } = await sendWatching("ledgerRemote w1 2500", (event) => {
      if (event.type !== "toolExecUpdate") return false;
      killed = workerOf(event);
      killedAt = Date.now();
      killed?.signal("SIGKILL");
      return true;
    });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: ANSWER_WITHIN_MS });
    const recoveryMs = Date.now() - killedAt;
    expect(textOf(response)).toBe("final w1: w1-1 recorded");
    const runs = await executionsOf("w1-1");
    expect(runs).toHaveLength(2);
    expect(runs[0]?.pid).toBe(killed?.pid);
    expect(runs[1]?.pid).not.toBe(killed?.pid);
    expect(await toolResults(sessionId)).toHaveLength(1);
    await recordFigure({
      ...{ scenario: "worker SIGKILLed mid-call, retried, production lock (failure detector)" },
      ...{ runs: 1, calls: 1, lost: 0, duplicated: 0, recoveryMs },
      note: "retries: 1; 30 s lock, 30 s stalled check; the call ran again on another worker once the dead one's heartbeat ran out (2.5 s call)",
    });
    await cluster.addWorker();
  }, 120_000);

  it("runs a call once when its worker is SIGSTOPped for 10 s (no retries), with its real result", async () => {
    let stopped: TestProcess | undefined;
    const { runId, sessionId } = await sendWatching("ledgerNoRetry z1 2000", (event) => {
      if (event.type !== "toolExecUpdate") return false;
      stopped = workerOf(event);
      stopped?.signal("SIGSTOP");
      return true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    stopped?.signal("SIGCONT");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 40_000 });
    expect(textOf(response)).toBe("final z1: z1-1 recorded");
    expect(await executionsOf("z1-1")).toHaveLength(1);
    expect(await toolResults(sessionId)).toHaveLength(1);
    await recordFigure({
      ...{ scenario: "worker SIGSTOPped 10 s mid-call, no retries (failure detector)" },
      ...{ runs: 1, calls: 1, lost: 0, duplicated: 0 },
      note: "taken for dead after its heartbeat ran out, its call handed out; the new holder waited for the stopped worker, which woke and recorded its result: 1 execution",
    });
  }, 60_000);

  it("fences a coordinator SIGSTOPped for 10 s: the other resumes its run, nothing runs twice", async () => {
    let stopped: TestProcess | undefined;
    const { runId, sessionId } = await sendWatching("ledgerNoRetry s1 3000 2", async (event) => {
      if (event.type !== "toolExecStart") return false;
      stopped = await holderOf(event.sessionId ?? "");
      stopped.signal("SIGSTOP");
      return true;
    });
    const stoppedAt = Date.now();
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: ANSWER_WITHIN_MS });
    expect(textOf(response)).toBe("final s1: s1-1 recorded | s1-2 recorded");
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, stoppedAt + 10_000 - Date.now())),
    );
    stopped?.signal("SIGCONT");
    await new Promise((resolve) => setTimeout(resolve, 3000)); // woken, it finds itself fenced
    expect(await executionsOf("s1-1")).toHaveLength(1);
    expect(await executionsOf("s1-2")).toHaveLength(1);
    expect(await toolResults(sessionId)).toHaveLength(2);
    const answers = (await cluster.client.messages(sessionId)).filter(
      (m) => m.role === "assistant" && textOf(m).startsWith("final"),
    );
    expect(answers).toHaveLength(1);
    await recordFigure({
      ...{ scenario: "coordinator SIGSTOPped 10 s while the tools run (failure detector)" },
      ...{ runs: 1, calls: 2, lost: 0, duplicated: 0 },
      note: "the other coordinator resumed the run once the stopped one's heartbeat ran out; woken, the stopped one was fenced: each tool ran once, one answer",
    });
  }, 60_000);
});
