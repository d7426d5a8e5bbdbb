/**
 * An abort is recorded in the session before it is announced, like a decision: one sent while
 * no coordinator runs stops the open run as soon as a coordinator resumes it, one sent right
 * after an approval keeps the approved call from running, and one sent to a session with no
 * open run does nothing and says so.
 */
import { randomUUID } from "node:crypto";
import type { BusEvent, ToolResultMessage } from "@yiem/core";
import { toolJobId } from "@yiem/core/internal";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Job, Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { recordFigure, useLedgerCluster, waitUntilSessionUnheld } from "../support/faults.js";

type Wire = { role: string; content: unknown };

/** The tool each scenario calls, by the user message's first word; "plain" calls none. */
const TOOLS: Record<string, string> = { wait: "waitForAbort", one: "ledgerApproval" };

/** `<scenario> <label>`: one call `<label>-1` of the scenario's tool, then `final <label>: <results>`. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const [scenario = "", label = "x"] = String(lastUser?.content ?? "").split(" ");
  const tool = TOOLS[scenario];
  if (!tool || messages.at(-1)?.role === "tool") {
    const results = messages
      .slice(messages.lastIndexOf(lastUser as Wire))
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content));
    return { kind: "text", text: `final ${label}: ${results.join(" | ")}` };
  }
  return {
    kind: "toolCalls",
    calls: [{ id: `${label}-1`, name: tool, arguments: { label: `${label}-1`, ms: 200 } }],
  };
}

const { cluster, ledger } = useLedgerCluster({
  workers: 1,
  model: { respond },
  env: { YIEM_SHUTDOWN_GRACE_MS: "200" },
});

let toolQueue: { queue: Queue; connection: Redis } | undefined;

afterAll(async () => {
  await toolQueue?.queue.close();
  toolQueue?.connection.disconnect();
});

/** The first event of `type` in the session (replayed if it came already). */
async function eventOf(sessionId: string, type: BusEvent["type"]): Promise<BusEvent> {
  for await (const event of cluster.client.events(sessionId, { fromStart: true }))
    if (event.type === type) return event;
  throw new Error(`no ${type} in session ${sessionId}`);
}

/** Sends `text` to a new session and waits for its first event of `type`. */
async function sendAndWaitFor(text: string, type: BusEvent["type"]) {
  const sessionId = randomUUID();
  const seen = eventOf(sessionId, type);
  const { runId } = await cluster.client.send(text, { sessionId });
  await seen;
  return { sessionId, runId };
}

/** Waits until no coordinator holds the session (its run is parked). */
function waitUntilParked(sessionId: string): Promise<void> {
  return waitUntilSessionUnheld(cluster.redis.url, cluster.redis.prefix, sessionId);
}

/** SIGTERMs every coordinator and waits until each has exited. */
async function stopEveryCoordinator(): Promise<void> {
  for (const coordinator of cluster.coordinators) coordinator.signal("SIGTERM");
  await Promise.all(cluster.coordinators.map((c) => c.exited));
}

function textOf(response: { content: Array<{ type: string; text?: string }> }): string {
  return response.content.map((block) => block.text ?? "").join("");
}

async function toolResultsOf(sessionId: string): Promise<ToolResultMessage[]> {
  const messages = await cluster.client.messages(sessionId);
  return messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
}

/** The tool job of call `callKey` of run `runId`, if it was ever added. */
async function toolJobOf(sessionId: string, runId: string, callKey: string) {
  if (!toolQueue) {
    const connection = new Redis(cluster.redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue("tools-default", {
      connection,
      prefix: `${cluster.redis.prefix}:bull`,
    });
    toolQueue = { queue, connection };
  }
  return Job.fromId(toolQueue.queue, toolJobId(sessionId, runId, callKey));
}

describe("aborts are recorded, then announced", () => {
  it("stops a running run aborted while no coordinator runs (yiem abort), once a coordinator starts: the model is not asked again, and the next input runs", async () => {
    const { sessionId, runId } = await sendAndWaitFor("wait w1", "toolExecStart");
    await stopEveryCoordinator(); // the run stays open in Redis, its call running on the worker
    const asked = cluster.model.requests.length;

    const abort = await runCli(["abort", sessionId], cluster.env);
    expect(abort.stderr).toBe("");
    expect(abort.stdout).toContain(
      `Abort sent to session ${sessionId}: its open run ${runId} ends aborted`,
    );
    expect(abort.code).toBe(0);
    const startedAt = Date.now();
    await cluster.addCoordinator();

    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("aborted");
    expect(cluster.model.requests.length).toBe(asked);
    const [result] = await toolResultsOf(sessionId);
    expect(result).toMatchObject({ toolCallId: "w1-1", isError: true });
    const recoveryMs = Date.now() - startedAt;

    // The abort was taken with the run: the session's next input runs as usual.
    const next = await cluster.client.send("plain n1", { sessionId });
    const answer = await cluster.client.waitForResponse(next.runId, { timeoutMs: 20_000 });
    expect(answer.stopReason).toBe("stop");
    expect(textOf(answer)).toBe("final n1: ");
    expect(cluster.model.requests.length).toBe(asked + 1);
    await recordFigure({
      scenario: "abort sent while every coordinator was stopped, a call running",
      runs: 2,
      calls: 1,
      lost: 0,
      duplicated: 0,
      recoveryMs,
      note: "the run ended aborted once a coordinator started, with no further model call; the next input ran",
    });
  });

  it("stops a parked run aborted while no coordinator runs (YiemClient.abort): its waiting call is denied and never runs", async () => {
    const { sessionId, runId } = await sendAndWaitFor("one p1", "toolApprovalRequested");
    await waitUntilParked(sessionId);
    await stopEveryCoordinator();
    const asked = cluster.model.requests.length;

    expect(await cluster.client.abort(sessionId)).toEqual({ kind: "recorded", runId });
    await cluster.addCoordinator();

    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("aborted");
    expect(cluster.model.requests.length).toBe(asked);
    const [result] = await toolResultsOf(sessionId);
    expect(result).toMatchObject({ toolCallId: "p1-1", isError: true });
    expect(result?.details.approval).toMatchObject({
      decision: "denied",
      reason: "the session was aborted",
    });
    expect((await ledger.countsByCall()).get("p1-1")).toBeUndefined();
    expect(await cluster.client.pendingApprovals(sessionId)).toEqual([]);
  });

  it("does nothing to a session with no open run, and says so; no later run is aborted", async () => {
    const sessionId = randomUUID();
    const first = await cluster.client.send("plain i1", { sessionId });
    await cluster.client.waitForResponse(first.runId, { timeoutMs: 20_000 });

    expect(await cluster.client.abort(sessionId)).toEqual({ kind: "noOpenRun" });
    const abort = await runCli(["abort", sessionId], cluster.env);
    expect(abort.stdout).toBe(`Session ${sessionId} has no open run: nothing to abort.\n`);
    expect(abort.code).toBe(0);

    const next = await cluster.client.send("plain i2", { sessionId });
    const answer = await cluster.client.waitForResponse(next.runId, { timeoutMs: 20_000 });
    expect(answer.stopReason).toBe("stop");
  });

  it("keeps an approved call from running when the abort is recorded before the call is dispatched (many trials)", async () => {
    await cluster.addCoordinator(); // the decision and the abort may land on either
    const trials = 8;
    let stoppedBeforeDispatch = 0;
    for (let trial = 1; trial <= trials; trial++) {
      const label = `t${trial}`;
      const { sessionId, runId } = await sendAndWaitFor(`one ${label}`, "toolApprovalRequested");
      await waitUntilParked(sessionId);
      const decided = eventOf(sessionId, "toolApprovalDecided");
      const approving = cluster.client.approve(sessionId, `${label}-1`).catch(() => undefined);
      await decided; // the approval is recorded: the run resumes now, somewhere
      const outcome = await cluster.client.abort(sessionId);
      const abortRecordedBy = Date.now();
      await approving;
      expect(outcome).toEqual({ kind: "recorded", runId });

      const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
      expect(response.stopReason).toBe("aborted");
      const ran = (await ledger.countsByCall()).get(`${label}-1`) ?? 0;
      expect(ran).toBeLessThanOrEqual(1);
      const job = await toolJobOf(sessionId, runId, `${label}-1`);
      if (ran === 0) stoppedBeforeDispatch++;
      // A call that ran was dispatched before the abort was recorded, never after.
      else expect(job?.timestamp ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(abortRecordedBy);
      if (!job) {
        const [result] = await toolResultsOf(sessionId);
        expect(result).toMatchObject({ toolCallId: `${label}-1`, isError: true });
      }
    }
    expect(stoppedBeforeDispatch).toBeGreaterThan(0); // the window was met
    await recordFigure({
      scenario: "approval, then an abort right away",
      runs: trials,
      calls: trials,
      lost: 0,
      duplicated: 0,
      note: `${stoppedBeforeDispatch} of ${trials} aborts recorded before the approved call was dispatched, none of those calls ran; ${trials - stoppedBeforeDispatch} dispatched before their abort ran; every run ended aborted`,
    });
  });
});
