import { randomUUID } from "node:crypto";
import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

/** Answers by the last user message: `parallel6`, `pair`, `sequential`, `timeout`, `missing`, `withArgs`, else echoes the tool results. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: results.join(" | ") };
  }
  const text = String(last?.content ?? "");
  if (text === "parallel6") {
    return {
      kind: "toolCalls",
      calls: [0, 1, 2, 3, 4, 5].map((i) => ({
        id: `p${i}`,
        name: "sleepFor",
        arguments: { ms: 600 - i * 100, label: `call${i}`, steps: 2 },
      })),
    };
  }
  if (text === "pair")
    return {
      kind: "toolCalls",
      calls: ["left", "right"].map((label) => ({
        id: label,
        name: "sleepFor",
        arguments: { ms: 50, label },
      })),
    };
  if (text === "sequential")
    return { kind: "toolCalls", calls: [{ id: "s1", name: "whereAmI", arguments: {} }] };
  if (text === "timeout")
    return {
      kind: "toolCalls",
      calls: [
        { id: "t1", name: "slowTimeout", arguments: {} },
        { id: "t2", name: "sleepFor", arguments: { ms: 10, label: "quick" } },
      ],
    };
  if (text === "missing")
    return { kind: "toolCalls", calls: [{ id: "m1", name: "coordinatorOnly", arguments: {} }] };
  if (text === "withArgs")
    return {
      kind: "toolCalls",
      calls: [{ id: "a1", name: "sleepFor", arguments: '{"ms":10,"label":"kept","steps":1}' }],
    };
  return { kind: "text", text: `echo: ${text}` };
}

// Three calls at once per worker: the batch of six runs all at once only on both workers.
const cluster = useTestCluster({
  workers: 2,
  model: { respond },
  env: { WORKER_CONCURRENCY: "3" },
});

async function collect(
  sessionId: string,
  runId: string | undefined,
  fromStart = false,
): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  for await (const event of cluster.client.events(sessionId, {
    fromStart,
    untilAgentEnd: true,
    runId,
  }))
    events.push(event);
  return events;
}

describe("the cluster runs tool calls", () => {
  it("runs a parallel batch of six on two workers and keeps call order when the calls end in another order", async () => {
    const { sessionId, runId } = await cluster.client.send("parallel6");
    const events = await collect(sessionId, runId, true);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toBe([0, 1, 2, 3, 4, 5].map((i) => `call${i} done`).join(" | "));
    const ends = events
      .filter((e) => e.type === "toolExecEnd")
      .map((e) => e.type === "toolExecEnd" && e.toolCallId);
    expect([...ends].sort()).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
    // The last call (100 ms) ends before the first (600 ms): the 100 ms steps between the
    // others are left to a loaded machine's timing.
    expect(ends.indexOf("p5")).toBeLessThan(ends.indexOf("p0"));
    const workers = new Set(
      events.flatMap((e) =>
        e.type === "toolExecEnd" ? [String((e.result.details as { worker?: string }).worker)] : [],
      ),
    );
    expect([...workers].sort()).toEqual(["worker-1", "worker-2"]);
    // Each remote call's end event names the worker that ran it.
    for (const e of events) {
      if (e.type !== "toolExecEnd") continue;
      expect(e.workerId).toBe((e.result.details as { worker?: string }).worker);
    }
  });

  it("runs a model turn's two parallel calls on one idle worker, taken together", async () => {
    const { sessionId, runId } = await cluster.client.send("pair");
    const events = await collect(sessionId, runId, true);
    await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const ranOn = events.flatMap((e) => (e.type === "toolExecEnd" ? [e.workerId] : []));
    expect(ranOn).toHaveLength(2);
    expect(ranOn[0]).toBe(ranOn[1]);
  });

  it("delivers each call's events start → updates → end with gap-free sequence numbers, and replays them to a late watcher", async () => {
    const sessionId = randomUUID();
    const watching = collect(sessionId, undefined, false); // a live watcher, subscribed before the send
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { runId } = await cluster.client.send("parallel6", { sessionId });
    const live = await watching;
    const stored = live.filter((e) => !e.live); // the streamed answer text comes live only
    const replay = await collect(sessionId, runId, true); // a watcher that starts after the run
    expect(replay).toEqual(stored);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    for (const id of ["p0", "p3", "p5"]) {
      const kinds = live.filter((e) => "toolCallId" in e && e.toolCallId === id).map((e) => e.type);
      expect(kinds).toEqual(["toolExecStart", "toolExecUpdate", "toolExecUpdate", "toolExecEnd"]);
    }
    const update = live.find((e) => e.type === "toolExecUpdate");
    expect(update?.workerId).toMatch(/^worker-[12]$/);
    expect(live.at(-1)).toMatchObject({ type: "agentEnd", inputIds: [runId] });
    const redis = new Redis(cluster.redis.url);
    const ttl = await redis.ttl(`${cluster.redis.prefix}:s:{${sessionId}}:messages`);
    redis.disconnect();
    expect(ttl).toBeGreaterThan(29 * 24 * 3600); // idle sessions expire after 30 days
  });

  it("runs a sequential batch in the coordinator's process", async () => {
    const { runId } = await cluster.client.send("sequential");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toBe(`pid ${cluster.coordinators[0]?.pid}`);
  });

  it("turns a tool timeout on a worker into an error result and finishes the batch", async () => {
    const { runId } = await cluster.client.send("timeout");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toBe("slowTimeout timed out after 300 ms | quick done");
  });

  it("reports a tool the worker does not have as an error result", async () => {
    const { runId } = await cluster.client.send("missing");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toMatch(/^Tool "coordinatorOnly" is not available on worker worker-[12]/);
  });

  it("stores the model's arguments on the tool-call block of the session's transcript", async () => {
    const { sessionId, runId } = await cluster.client.send("withArgs");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toBe(
      "kept done",
    );
    const messages = await cluster.client.messages(sessionId);
    const blocks = messages.flatMap((m) =>
      m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall") : [],
    );
    expect(blocks).toEqual([
      {
        type: "toolCall",
        id: "a1",
        name: "sleepFor",
        arguments: { ms: 10, label: "kept", steps: 1 },
        rawArguments: '{"ms":10,"label":"kept","steps":1}',
      },
    ]);
  });

  it("lists the live workers with their queues and tools", async () => {
    const workers = await cluster.client.workers();
    expect(workers.map((w) => w.workerId).sort()).toEqual(["worker-1", "worker-2"]);
    // The default queue, and the own queues of the limited tools the worker has.
    expect(workers[0]?.queues).toEqual(["default", "tool.limitedStep", "tool.ratedStep"]);
    expect(workers[0]?.tools).toEqual(expect.arrayContaining(["getTime", "sleepFor", "listTools"]));
  });
});
