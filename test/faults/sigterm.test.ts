import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { recordFigure } from "../support/faults.js";

/** `slow N`: one sleepFor call (1.5 s; 6 s for a hand-over, longer than the shutdown grace), then "done N". */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const text = String(lastUser?.content ?? "");
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: `done ${text}` };
  return {
    kind: "toolCalls",
    calls: [
      { name: "sleepFor", arguments: { ms: text.includes("handover") ? 6000 : 1500, label: text } },
    ],
  };
}

const cluster = useTestCluster({
  workers: 1,
  coordinators: 1,
  model: { respond },
  env: { YIEM_SHUTDOWN_GRACE_MS: "200" },
});

async function firstToolStart(sessionId: string): Promise<void> {
  for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
    if (event.type === "toolExecStart") return;
  }
}

describe("every process shuts down cleanly on SIGTERM", () => {
  it("drains a worker's running call before it exits, and the run completes", async () => {
    const sessionId = randomUUID();
    const started = firstToolStart(sessionId);
    const { runId } = await cluster.client.send("slow drain", { sessionId });
    await started;
    await new Promise((resolve) => setTimeout(resolve, 300)); // the call is running on the worker
    const worker = cluster.workers[0];
    worker?.signal("SIGTERM");
    expect(await worker?.exited).toBe(0);
    expect(worker?.lines.some((line) => line.includes('"msg":"stopped cleanly"'))).toBe(true);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "done slow drain" }]);
    expect(await cluster.client.workers()).toEqual([]);
    const admin = new Redis(cluster.redis.url);
    const bullEvents = await admin.xrange(
      `${cluster.redis.prefix}:bull:tools-default:events`,
      "-",
      "+",
    );
    admin.disconnect();
    const stalls = bullEvents.filter(([, fields]) => fields.includes("stalled"));
    expect(stalls).toEqual([]);
    await recordFigure({
      scenario: "SIGTERM to a worker with a call running",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "the call drained, the worker exited 0, no stall reported",
    });
    await cluster.addWorker();
  }, 60_000);

  it("hands a coordinator's running session over to another coordinator on SIGTERM, without running a call twice", async () => {
    const first = cluster.coordinators[0];
    const sessionId = randomUUID();
    // The second coordinator is up before the run starts (starting one under load may take
    // longer than the call), and stopped until the first holds the session.
    const second = await cluster.addCoordinator();
    second.signal("SIGSTOP");
    const started = firstToolStart(sessionId);
    let runId: string;
    try {
      ({ runId } = await cluster.client.send("slow handover", { sessionId }));
      await started; // the first coordinator holds the session and waits for the worker
    } finally {
      second.signal("SIGCONT");
    }
    first?.signal("SIGTERM");
    expect(await first?.exited).toBe(0);
    expect(first?.lines.join("\n")).toContain("handing over the sessions still held");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.content).toEqual([{ type: "text", text: "done slow handover" }]);
    const transcript = await cluster.client.messages(sessionId);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    const runs = cluster.workers
      .flatMap((w) => w.lines)
      .filter((l) => l.includes("tool call finished") && l.includes(sessionId));
    expect(runs).toHaveLength(1);
    const ends: string[] = [];
    for await (const event of cluster.client.events(sessionId, {
      fromStart: true,
      untilAgentEnd: true,
    })) {
      if (event.type === "toolExecEnd") ends.push(event.toolCallId);
    }
    expect(ends).toHaveLength(1); // the coordinator that handed over stayed silent
    await recordFigure({
      scenario: "SIGTERM to a coordinator holding a running session",
      runs: 1,
      calls: 1,
      lost: 0,
      duplicated: 0,
      note: "handed over after the grace period; the call ran once",
    });
  }, 60_000);

  it("never writes the API key to logs", () => {
    const all = [...cluster.coordinators, ...cluster.workers].flatMap((p) => p.lines).join("\n");
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain("sk-test-canary-key");
  });
});
