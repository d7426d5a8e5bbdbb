import { randomUUID } from "node:crypto";
import {
  freePort,
  logEntries,
  type ScriptedReply,
  type ScriptedRequest,
  sampleOf,
  scrape,
  waitForSample,
} from "@yiem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

/**
 * "sleep": two sleepFor calls; "missing": a coordinatorOnly call (the worker lacks that tool);
 * "wait": a waitForAbort call (it runs until the session is aborted). Results end the run.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: "done" };
  if (last?.content === "missing") {
    return { kind: "toolCalls", calls: [{ id: "m1", name: "coordinatorOnly", arguments: {} }] };
  }
  if (last?.content === "wait") {
    return {
      kind: "toolCalls",
      calls: [{ id: "w1", name: "waitForAbort", arguments: { label: "w" } }],
    };
  }
  return {
    kind: "toolCalls",
    calls: [
      { id: "s1", name: "sleepFor", arguments: { ms: 50, label: "a" } },
      { id: "s2", name: "sleepFor", arguments: { ms: 50, label: "b" } },
    ],
  };
}

// No worker at first: the one started below, with WORKER_PORT, runs every call.
const cluster = useTestCluster({ workers: 0, model: { respond } });
let workerUrl = "";

beforeAll(async () => {
  const port = await freePort();
  await cluster.addWorkerWith({ WORKER_PORT: String(port) });
  workerUrl = `http://127.0.0.1:${port}`;
});

const metricsUrl = () => `${workerUrl}/metrics`;

describe("a tool worker with WORKER_PORT serves /healthz and /metrics", () => {
  it("answers /healthz with 200 and its id, and says where it listens when ready", async () => {
    const response = await fetch(`${workerUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok", workerId: "worker-1" });
    const [ready] = logEntries(cluster.workers[0]!, "tool worker ready");
    expect(ready?.url).toBe(workerUrl);
  });

  it("counts the calls it ran by tool and outcome, times them, and has process metrics", async () => {
    const { runId } = await cluster.client.send("sleep");
    expect((await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 })).stopReason).toBe(
      "stop",
    );
    const missing = await cluster.client.send("missing");
    await cluster.client.waitForResponse(missing.runId, { timeoutMs: 20_000 });

    const metrics = await scrape(metricsUrl());
    expect(sampleOf(metrics, 'yiem_worker_tool_calls_total{tool="sleepFor",outcome="ok"}')).toBe(2);
    expect(sampleOf(metrics, 'yiem_worker_tool_call_duration_seconds_count{tool="sleepFor"}')).toBe(
      2,
    );
    // A tool this worker does not have is counted, under `unknown`, never under its name.
    expect(sampleOf(metrics, 'yiem_worker_tool_calls_total{tool="unknown",outcome="error"}')).toBe(
      1,
    );
    expect(metrics).not.toContain("coordinatorOnly");
    expect(sampleOf(metrics, 'yiem_worker_tool_calls_in_flight{tool="sleepFor"}')).toBe(0);
    expect(metrics).toContain("nodejs_eventloop_lag_seconds");
    expect(metrics).toContain("process_resident_memory_bytes");
  });

  it("shows a running call in flight, and counts it as aborted once its session is aborted", async () => {
    const sessionId = randomUUID();
    const running = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecUpdate") return; // waitForAbort runs on the worker now
      }
    })();
    const { runId } = await cluster.client.send("wait", { sessionId });
    await running;
    const series = 'yiem_worker_tool_calls_in_flight{tool="waitForAbort"}';
    expect(sampleOf(await scrape(metricsUrl()), series)).toBe(1);
    await cluster.client.abort(sessionId);
    expect((await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 })).stopReason).toBe(
      "aborted",
    );
    const aborted = 'yiem_worker_tool_calls_total{tool="waitForAbort",outcome="aborted"}';
    await waitForSample(metricsUrl(), aborted, 1); // the worker ends the call as the abort reaches it
    const metrics = await scrape(metricsUrl());
    expect(sampleOf(metrics, series)).toBe(0);
    expect(
      sampleOf(metrics, 'yiem_worker_tool_calls_total{tool="waitForAbort",outcome="error"}'),
    ).toBeUndefined();
  });
});
