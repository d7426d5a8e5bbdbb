import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
import { toolJobId, toolQueueName } from "@yiem/core/internal";
import type { ScriptedRequest } from "@yiem/testing";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  leaseHolderPid,
  normalizeTranscript,
  recordFigure,
  useLedgerCluster,
} from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

/** Called when the model receives a request whose last user message starts with the key. */
const onModelRequest = new Map<string, () => void>();

/**
 * Turns whose final answer (the model's reply to the tool results) comes 2 s late: the kill at
 * `turnEnd` must land while the run still holds its session, not after it already finished.
 */
const slowFinalAnswers = ["ledgerRemote res "];

function respond(request: ScriptedRequest) {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const text = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
  for (const [key, hook] of onModelRequest)
    if (text.startsWith(key) && messages.at(-1)?.role === "user") hook();
  const reply = faultModel(request);
  const afterTools = messages.at(-1)?.role === "tool";
  if (afterTools && slowFinalAnswers.some((key) => text.startsWith(key)))
    return { ...reply, delayMs: 2000 };
  return text.includes("slowmodel") ? { ...reply, delayMs: 800 } : reply;
}

const { cluster, ledger } = useLedgerCluster({
  workers: 2,
  coordinators: 2,
  model: { respond },
});

/**
 * Kills the coordinator holding `sessionId` with SIGKILL, runs `whileDead` (before the
 * session's lease runs out, so before anyone resumes it) and starts a replacement. Resolves with
 * when the kill was sent: recovery counts from the fault, as RELIABILITY says (the surviving
 * coordinator may resume the session before the replacement is ready).
 */
async function killHolder(sessionId: string, whileDead?: () => Promise<void>): Promise<number> {
  const pid = await leaseHolderPid(cluster.redis.url, cluster.redis.prefix, sessionId);
  const holder = cluster.coordinators.find((c) => c.pid === pid);
  if (!holder) throw new Error(`no coordinator holds ${sessionId} (lease pid ${pid})`);
  const killedAt = Date.now();
  holder.signal("SIGKILL");
  await holder.exited;
  await whileDead?.();
  await cluster.addCoordinator();
  return killedAt;
}

/** Runs `text` on a new session, killing its coordinator when `when` matches an event. */
async function runWithCrash(text: string, when: (event: BusEvent) => boolean) {
  const sessionId = randomUUID();
  const killed = (async () => {
    for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
      if (when(event)) return killHolder(sessionId);
    }
    return 0;
  })();
  const { runId } = await cluster.client.send(text, { sessionId });
  const killedAt = await killed;
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
  return { sessionId, response, recoveryMs: Date.now() - killedAt };
}

async function transcriptOf(sessionId: string): Promise<string> {
  return JSON.stringify(normalizeTranscript(await cluster.client.messages(sessionId)));
}

let reference = "";

describe("faults: a coordinator is SIGKILLed at each step of a turn", () => {
  it("runs a crash-free reference turn", async () => {
    const { runId, sessionId } = await cluster.client.send("ledgerRemote ref 1500 2");
    await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    reference = await transcriptOf(sessionId);
    expect(reference).toContain("final ref: ref-1 recorded | ref-2 recorded");
  });

  const steps: Array<[string, string, (event: BusEvent) => boolean]> = [
    [
      "after the model answered",
      "ans",
      (e) => e.type === "messageEnd" && e.message.role === "assistant",
    ],
    ["after dispatch", "dsp", (e) => e.type === "toolExecStart" && e.toolCallId.endsWith("-2")],
    ["while the tools run", "run", (e) => e.type === "toolExecUpdate"],
    ["after the results came back", "res", (e) => e.type === "turnEnd"],
  ];

  for (const [step, label, when] of steps) {
    it(`resumes on another coordinator when killed ${step}: same transcript, no remote call twice`, async () => {
      const { sessionId, recoveryMs } = await runWithCrash(`ledgerRemote ${label} 1500 2`, when);
      expect(await transcriptOf(sessionId)).toBe(reference.replaceAll("ref", label));
      const counts = await ledger.countsByCall();
      expect([counts.get(`${label}-1`), counts.get(`${label}-2`)]).toEqual([1, 1]);
      const lifecycle = new Map<string, string[]>();
      for await (const event of cluster.client.events(sessionId, {
        fromStart: true,
        untilAgentEnd: true,
      })) {
        if (event.type !== "toolExecStart" && event.type !== "toolExecEnd") continue;
        lifecycle.set(event.toolCallId, [...(lifecycle.get(event.toolCallId) ?? []), event.type]);
      }
      for (const id of [`${label}-1`, `${label}-2`])
        expect(lifecycle.get(id)).toEqual(["toolExecStart", "toolExecEnd"]);
      await recordFigure({
        scenario: `coordinator SIGKILLed ${step}`,
        runs: 1,
        calls: 2,
        lost: 0,
        duplicated: 0,
        recoveryMs,
      });
    });
  }

  it("resumes when killed while the model is answering", async () => {
    const sessionId = randomUUID();
    let killing: Promise<number> | undefined;
    onModelRequest.set("ledgerRemote llm", () => {
      onModelRequest.delete("ledgerRemote llm");
      killing = new Promise((resolve) => setTimeout(resolve, 100)).then(() =>
        killHolder(sessionId),
      );
    });
    const { runId } = await cluster.client.send("ledgerRemote llm 300 2 slowmodel", { sessionId });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
    const recoveryMs = Date.now() - ((await killing) ?? Date.now());
    expect(response.content).toEqual([
      { type: "text", text: "final llm: llm-1 recorded | llm-2 recorded" },
    ]);
    const counts = await ledger.countsByCall();
    expect([counts.get("llm-1"), counts.get("llm-2")]).toEqual([1, 1]);
    await recordFigure({
      scenario: "coordinator SIGKILLed while the model answers",
      runs: 1,
      calls: 2,
      lost: 0,
      duplicated: 0,
      recoveryMs,
    });
  });

  it("does not run a finished call again when its tool job was removed before the run resumed", async () => {
    const sessionId = randomUUID();
    const queue = new Queue(toolQueueName("default"), {
      connection: { url: cluster.redis.url },
      prefix: `${cluster.redis.prefix}:bull`,
    });
    let killing: Promise<number> | undefined;
    let runId = "";
    const removedJob = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type !== "toolExecEnd" || event.toolCallId !== "rm-1") continue;
        // rm-2 still runs, so no result is appended yet: the resumed run dispatches rm-1 again.
        const jobId = toolJobId(sessionId, event.runId, "rm-1");
        killing = killHolder(sessionId, async () => {
          await queue.clean(0, 1000, "completed"); // Bull Board's "clean completed"
        });
        await killing;
        return queue.getJob(jobId);
      }
    })();
    try {
      ({ runId } = await cluster.client.send("ledgerRemote rm 100,3000 2", { sessionId }));
      expect(await removedJob).toBeUndefined();
    } finally {
      await queue.close();
    }
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 45_000 });
    const recoveryMs = Date.now() - ((await killing) ?? Date.now());
    expect(response.content).toEqual([
      { type: "text", text: "final rm: rm-1 recorded | rm-2 recorded" },
    ]);
    const runs = (await ledger.entries()).filter((e) => e.callId === "rm-1");
    expect(runs).toHaveLength(1);
    const results = (await cluster.client.messages(sessionId)).filter(
      (m) => m.role === "toolResult",
    );
    expect(results.map((m) => [m.toolCallId, m.details])).toEqual([
      ["rm-1", { pid: runs[0]?.pid }],
      ["rm-2", expect.anything()],
    ]);
    await recordFigure({
      scenario: "coordinator SIGKILLed, a finished tool job removed before the resume",
      runs: 1,
      calls: 2,
      lost: 0,
      duplicated: 0,
      recoveryMs,
      note: "the resumed run took the call's result from its finished marker; the tool ran once",
    });
  });

  it("gives an interrupted in-process call that is not idempotent the 'interrupted' result", async () => {
    const { sessionId, response } = await runWithCrash(
      "ledgerLocal loc 3000",
      (e) => e.type === "toolExecUpdate",
    );
    expect(response.content).toEqual([
      { type: "text", text: "final loc: interrupted: the coordinator stopped while this call ran" },
    ]);
    expect((await ledger.countsByCall()).get("loc-1")).toBe(1);
    const results = (await cluster.client.messages(sessionId)).filter(
      (m) => m.role === "toolResult",
    );
    expect(results).toHaveLength(1);
    await recordFigure({
      scenario: "coordinator SIGKILLed during an in-process call (not idempotent)",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "the call was not run again; the model saw 'interrupted'",
    });
  });

  it("runs an interrupted idempotent in-process call again", async () => {
    const { response } = await runWithCrash(
      "ledgerLocalIdempotent idem 3000",
      (e) => e.type === "toolExecUpdate",
    );
    expect(response.content).toEqual([{ type: "text", text: "final idem: idem-1 recorded" }]);
    expect((await ledger.countsByCall()).get("idem-1")).toBe(2);
    await recordFigure({
      scenario: "coordinator SIGKILLed during an in-process call (idempotent)",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "idempotent: run again by design",
    });
  });
});
