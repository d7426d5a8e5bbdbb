import { randomUUID } from "node:crypto";
import { logMessage, type ScriptedReply, type ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const INVENTED = Array.from({ length: 200 }, (_, i) => `invented_tool_${i}_q7x`);

/**
 * "invent": one valid call, then 200 tool names nobody registered (most past the 64-call cap);
 * "abort me": a call that waits in a queue nobody serves. Tool results end the run.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "done" };
  if (messages.at(-1)?.content === "abort me") {
    return { kind: "toolCalls", calls: [{ id: "u1", name: "unservedQueue", arguments: {} }] };
  }
  return {
    kind: "toolCalls",
    calls: [
      { id: "valid", name: "sleepFor", arguments: { ms: 1, label: "valid" } },
      ...INVENTED.map((name, i) => ({ id: `x${i}`, name, arguments: {} })),
    ],
  };
}

const cluster = useTestCluster({ workers: 1, model: { respond } });

async function scrapeMetrics(): Promise<string> {
  return (await fetch(`${cluster.coordinatorUrls[0]}/metrics`)).text();
}

/** The value of the sample `name{labels}` in a Prometheus text scrape, or undefined. */
function sampleOf(metrics: string, series: string): number | undefined {
  const line = metrics.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The tool names the coordinator registered, from its "coordinator ready" log line. */
function registeredTools(): string[] {
  const line = cluster.coordinators[0]?.lines.find(logMessage("coordinator ready")) ?? "{}";
  return (JSON.parse(line) as { tools?: string[] }).tools ?? [];
}

describe("tool-call metrics are labelled by registered tools only", () => {
  it("counts 200 invented tool names under tool=unknown and never shows them, while a registered tool keeps its name", async () => {
    const { runId } = await cluster.client.send("invent");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.stopReason).toBe("stop");
    const metrics = await scrapeMetrics();
    for (const name of INVENTED) expect(metrics).not.toContain(name);
    expect(sampleOf(metrics, 'yiem_tool_calls_total{tool="unknown",outcome="error"}')).toBe(200);
    expect(sampleOf(metrics, 'yiem_tool_call_duration_seconds_count{tool="unknown"}')).toBe(200);
    expect(sampleOf(metrics, 'yiem_tool_calls_total{tool="sleepFor",outcome="ok"}')).toBe(1);
    expect(sampleOf(metrics, 'yiem_tool_call_duration_seconds_count{tool="sleepFor"}')).toBe(1);
    const labels = new Set([...metrics.matchAll(/\btool="([^"]*)"/g)].map((m) => m[1]));
    const allowed = new Set([...registeredTools(), "unknown"]);
    expect(allowed.has("sleepFor")).toBe(true); // the log line was read
    expect([...labels].filter((label) => !allowed.has(label ?? ""))).toEqual([]);
  });

  it("counts a call ended by an abort as outcome=aborted, not error", async () => {
    const sessionId = randomUUID();
    const started = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecStart" && event.toolCallId === "u1") return;
      }
    })();
    const { runId } = await cluster.client.send("abort me", { sessionId });
    await started;
    await cluster.client.abort(sessionId);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("aborted");
    const metrics = await scrapeMetrics();
    expect(sampleOf(metrics, 'yiem_tool_calls_total{tool="unservedQueue",outcome="aborted"}')).toBe(
      1,
    );
    expect(
      sampleOf(metrics, 'yiem_tool_calls_total{tool="unservedQueue",outcome="error"}'),
    ).toBeUndefined();
  });
});
