/**
 * Human approval that survives restarts: a call of a tool with `approval: "always"` does not
 * run; its run parks (no coordinator holds it) until someone approves or denies it, from the
 * CLI or the client, on whichever coordinator is alive; a timeout denies on its own.
 */
import { randomUUID } from "node:crypto";
import type { BusEvent, ToolResultMessage } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it, vi } from "vitest";
import { runCli, startCli } from "../support/cliProcess.js";
import { useLedgerCluster, waitUntilSessionUnheld } from "../support/faults.js";
import { openPlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

type Wire = { role: string; content: unknown };

/** The tools each scenario's batch calls, by the user message's first word. */
const BATCHES: Record<string, string[]> = {
  one: ["ledgerApproval"],
  timeout: ["ledgerApprovalTimeout"],
  mixed: ["ledgerRemote", "ledgerApproval", "ledgerRemote"],
  two: ["ledgerApproval", "ledgerApproval"],
  local: ["ledgerLocal", "ledgerApproval"],
};

/**
 * `<scenario> <label>` asks for the scenario's batch (ids `<label>-1`, `<label>-2`, …); once
 * the results are in, the model answers `final <label>: <result texts>`.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const [scenario = "", label = "x"] = String(lastUser?.content ?? "").split(" ");
  if (messages.at(-1)?.role === "tool") {
    const results = messages
      .slice(messages.lastIndexOf(lastUser as Wire))
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content));
    return { kind: "text", text: `final ${label}: ${results.join(" | ")}` };
  }
  const calls = (BATCHES[scenario] ?? []).map((name, i) => ({
    id: `${label}-${i + 1}`,
    name,
    arguments: { label: `${label}-${i + 1}`, ms: 200 },
  }));
  return { kind: "toolCalls", calls };
}

const { cluster, ledger } = useLedgerCluster({ workers: 2, model: { respond } });

/** Sends `text` to a new session and waits until `count` calls await approval. */
async function sendAndWaitForApprovals(text: string, count = 1) {
  const sessionId = randomUUID();
  const requested: BusEvent[] = [];
  const seen = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
      if (event.type === "toolApprovalRequested") requested.push(event);
      if (requested.length === count) return;
    }
  })();
  const { runId } = await cluster.client.send(text, { sessionId });
  await seen;
  return { sessionId, runId, requested };
}

/** Waits until no coordinator holds the session (its run is parked). */
function waitUntilParked(sessionId: string): Promise<void> {
  return waitUntilSessionUnheld(cluster.redis.url, cluster.redis.prefix, sessionId);
}

function textOf(response: { content: Array<{ type: string; text?: string }> }): string {
  return response.content.map((block) => block.text ?? "").join("");
}

async function toolResultsOf(sessionId: string): Promise<ToolResultMessage[]> {
  const messages = await cluster.client.messages(sessionId);
  return messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
}

describe("human approval of tool calls", () => {
  it("survives every coordinator being killed: approved from the CLI, the call runs once and the run completes", async () => {
    const { sessionId, runId, requested } = await sendAndWaitForApprovals("one a1");
    expect(requested[0]).toMatchObject({
      type: "toolApprovalRequested",
      toolCallId: "a1-1",
      callKey: "a1-1",
      toolName: "ledgerApproval",
      arguments: { label: "a1-1", ms: 200 },
      reason: "ledgerApproval always requires approval",
    });
    await waitUntilParked(sessionId);
    const pending = await runCli(["pending", sessionId], cluster.env);
    expect(pending.stdout).toMatch(/^SESSION\s+CALL\s+TOOL\s+REASON\s+AGE/m);
    expect(pending.stdout).toContain(
      `${sessionId}  a1-1  ledgerApproval  ledgerApproval always requires approval`,
    );

    for (const coordinator of cluster.coordinators) coordinator.signal("SIGKILL");
    await Promise.all(cluster.coordinators.map((c) => c.exited));
    await cluster.addCoordinator();

    const approved = await runCli(["approve", sessionId, "a1-1", "--by", "ana"], cluster.env);
    expect(approved.stderr).toBe("");
    expect(approved.stdout).toContain(
      `Approved call a1-1 of session ${sessionId}: its run resumes.`,
    );
    expect(approved.code).toBe(0);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final a1: a1-1 recorded");
    expect((await ledger.countsByCall()).get("a1-1")).toBe(1);
    const [result] = await toolResultsOf(sessionId);
    expect(result?.details.approval).toMatchObject({ decision: "approved", by: "ana" });
    expect((await runCli(["pending", sessionId], cluster.env)).stdout).toContain(
      "No tool call awaits approval.",
    );
  }, 90_000); // a coordinator started and three CLI processes: slow on a loaded machine

  it("completes a parked run's request job, added with plain BullMQ, with its answer after the approval, though its coordinator was SIGKILLed while it waited", async () => {
    const plain = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
    try {
      const sessionId = randomUUID();
      const requested = (async () => {
        for await (const event of cluster.client.events(sessionId, { fromStart: true }))
          if (event.type === "toolApprovalRequested") return;
      })();
      const job = await plain.queue.add("request", { input: "one k1", sessionId });
      await requested;
      await waitUntilParked(sessionId);
      expect(await job.getState()).toBe("active"); // held by its coordinator, input let go
      for (const coordinator of cluster.coordinators) coordinator.signal("SIGKILL");
      await Promise.all(cluster.coordinators.map((c) => c.exited));
      await cluster.addCoordinator();
      await cluster.client.approve(sessionId, "k1-1", { by: "ana" });
      const result = await job.waitUntilFinished(plain.events, 30_000);
      expect(result).toMatchObject({ sessionId, runId: job.id });
      expect(textOf(result.response)).toBe("final k1: k1-1 recorded");
      expect((await ledger.countsByCall()).get("k1-1")).toBe(1);
    } finally {
      await plain.close();
    }
  });

  it("gives the model a denial as the call's error result, with the reason", async () => {
    const sessionId = randomUUID();
    const send = startCli(["send", "one d1", "--session", sessionId], cluster.env);
    await send.waitFor(
      new RegExp(
        `⏸ ledgerApproval\\(.*\\) awaits approval: ledgerApproval always requires approval — yiem approve ${sessionId} d1-1 / yiem deny ${sessionId} d1-1`,
      ),
    );
    const denied = await runCli(
      ["deny", sessionId, "d1-1", "--reason", "not on a Friday", "--by", "bo"],
      cluster.env,
    );
    expect(denied.code).toBe(0);
    const sent = await send.done;
    expect(sent.stdout).toContain("⊘ ledgerApproval denied by bo: not on a Friday");
    expect(sent.stdout).toContain("final d1: The call was not run: denied by bo: not on a Friday");
    expect(sent.code).toBe(0);
    expect((await ledger.countsByCall()).get("d1-1")).toBeUndefined();
    const [result] = await toolResultsOf(sessionId);
    expect(result?.isError).toBe(true);
    expect(result?.details.approval).toMatchObject({
      decision: "denied",
      by: "bo",
      reason: "not on a Friday",
    });
  });

  it("denies a call on its own when its approval timeout passes", async () => {
    const { runId } = await cluster.client.send("timeout t1");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe(
      "final t1: The call was not run: denied: no decision within 1500 ms (approval timeout)",
    );
    expect((await ledger.countsByCall()).get("t1-1")).toBeUndefined();
  });

  it("runs the other calls of a parallel batch once, and returns every result in call order after the approval", async () => {
    const { sessionId, runId } = await sendAndWaitForApprovals("mixed m1");
    await waitUntilParked(sessionId);
    const before = await ledger.countsByCall();
    expect([before.get("m1-1"), before.get("m1-2"), before.get("m1-3")]).toEqual([1, undefined, 1]);
    await cluster.client.approve(sessionId, "m1-2", { by: "cy" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final m1: m1-1 recorded | m1-2 recorded | m1-3 recorded");
    const after = await ledger.countsByCall();
    expect([after.get("m1-1"), after.get("m1-2"), after.get("m1-3")]).toEqual([1, 1, 1]);
    expect((await toolResultsOf(sessionId)).map((r) => r.toolCallId)).toEqual([
      "m1-1",
      "m1-2",
      "m1-3",
    ]);
    const ends: string[] = [];
    const order: string[] = [];
    for await (const event of cluster.client.events(sessionId, {
      fromStart: true,
      untilAgentEnd: true,
    })) {
      if (event.type === "toolExecEnd") ends.push(event.toolCallId);
      if ("toolCallId" in event && event.toolCallId === "m1-2" && event.type !== "toolExecUpdate")
        order.push(event.type);
      if (event.type === "toolApprovalDecided")
        expect(event).toMatchObject({ callKey: "m1-2", approved: true, by: "cy" });
    }
    expect(ends.sort()).toEqual(["m1-1", "m1-2", "m1-3"]); // each call ends once
    // The decision is on the bus once, between the request and the call's end.
    expect(order).toEqual([
      "toolExecStart",
      "toolApprovalRequested",
      "toolApprovalDecided",
      "toolExecEnd",
    ]);
  });

  it("ends a parked run when its session is aborted: the waiting call is denied, the others keep their results, the model is not asked again", async () => {
    const { sessionId, runId } = await sendAndWaitForApprovals("mixed ab1");
    await waitUntilParked(sessionId);
    const asked = cluster.model.requests.length;
    await cluster.client.abort(sessionId);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("aborted");
    expect(cluster.model.requests.length).toBe(asked);
    const results = await toolResultsOf(sessionId);
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["ab1-1", false],
      ["ab1-2", true],
      ["ab1-3", false],
    ]);
    expect(results[1]?.details.approval).toMatchObject({
      decision: "denied",
      reason: "the session was aborted",
    });
    const counts = await ledger.countsByCall();
    expect([counts.get("ab1-1"), counts.get("ab1-2"), counts.get("ab1-3")]).toEqual([
      1,
      undefined,
      1,
    ]);
    expect(await cluster.client.pendingApprovals(sessionId)).toEqual([]);
  });

  it("reuses an in-process call's result after the approval: not run again, not 'interrupted'", async () => {
    const { sessionId, runId } = await sendAndWaitForApprovals("local s1");
    await waitUntilParked(sessionId);
    await cluster.client.approve(sessionId, "s1-2");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final s1: s1-1 recorded | s1-2 recorded");
    const counts = await ledger.countsByCall();
    expect([counts.get("s1-1"), counts.get("s1-2")]).toEqual([1, 1]);
  });

  it("refuses a decision added to the coordinator queue: decisions go to the decisions queue", async () => {
    const { sessionId, runId } = await sendAndWaitForApprovals("one q1");
    const plain = await openPlainCoordinatorQueue(cluster.redis.url, cluster.redis.prefix);
    try {
      const decision = { sessionId, toolCallId: "q1-1", approved: true, by: "a forged lead" };
      const job = await plain.queue.add("decide", { decision });
      // Polled, not waited on with QueueEvents: a failure between its ready and its first read is missed.
      const failedReason = await vi.waitFor(
        async () => {
          if ((await job.getState()) !== "failed") throw new Error("not failed yet");
          return (await plain.queue.getJob(job.id ?? ""))?.failedReason;
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(failedReason).toContain(
        "invalid request: decision: decisions are not taken on the coordinator queue: add them to the decisions queue (the approver role, docs/SECURITY.md)",
      );
    } finally {
      await plain.close();
    }
    expect((await cluster.client.pendingApprovals(sessionId)).map((p) => p.callKey)).toEqual([
      "q1-1",
    ]);
    await cluster.client.approve(sessionId, "q1-1", { by: "ana" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final q1: q1-1 recorded");
    expect((await ledger.countsByCall()).get("q1-1")).toBe(1);
  });

  it("refuses approving twice, or a call that does not wait, as a clear no-op", async () => {
    const { sessionId, runId } = await sendAndWaitForApprovals("two n1", 2);
    const first = await cluster.client.approve(sessionId, "n1-1", { by: "di" });
    expect(first).toMatchObject({ approved: true, resumed: false });
    const twice = await runCli(["approve", sessionId, "n1-1"], cluster.env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(
      new RegExp(`^yiem: no-op: call n1-1 of session ${sessionId} was already approved by di at `),
    );
    const unknown = await runCli(["deny", sessionId, "nope"], cluster.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      `yiem: no-op: call nope of session ${sessionId} is not awaiting approval`,
    );
    await cluster.client.approve(sessionId, "n1-2");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(textOf(response)).toBe("final n1: n1-1 recorded | n1-2 recorded");
    await expect(cluster.client.approve(sessionId, "n1-2")).rejects.toThrow(/^no-op: /);
    const counts = await ledger.countsByCall();
    expect([counts.get("n1-1"), counts.get("n1-2")]).toEqual([1, 1]);
  });
});
