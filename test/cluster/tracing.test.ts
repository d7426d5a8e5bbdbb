/**
 * One trace per run across processes: the coordinator's run, LLM-call and tool-call spans,
 * and the worker's execution spans as children of the tool calls they ran, exported over
 * OTLP/HTTP to a real (test) collector with nothing but the standard OTEL_* variables.
 */

import {
  type CollectedSpan,
  type OtlpCollector,
  type ScriptedReply,
  type ScriptedRequest,
  startOtlpCollector,
} from "@yiem/testing";
import { afterAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string }>;
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "both done" };
  return {
    kind: "toolCalls",
    calls: [
      { id: "t1", name: "sleepFor", arguments: { ms: 50, label: "one" } },
      { id: "t2", name: "sleepFor", arguments: { ms: 50, label: "two" } },
    ],
  };
}

let collector: OtlpCollector;

const cluster = useTestCluster(async () => {
  collector = await startOtlpCollector();
  return {
    workers: 1,
    model: { respond },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "100" },
  };
});

afterAll(async () => {
  await collector?.close();
});

async function spansOfRun(runId: string, expected: number): Promise<CollectedSpan[]> {
  for (let i = 0; i < 200; i++) {
    const run = collector.spans.find(
      (s) => s.name === "yiem.run" && s.attributes["yiem.run_id"] === runId,
    );
    const trace = run ? collector.spans.filter((s) => s.traceId === run.traceId) : [];
    if (trace.length >= expected) return trace;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `the run's trace never had ${expected} spans (collected ${collector.spans.length})`,
  );
}

describe("tracing across the cluster", () => {
  it("links a run, its LLM calls, its tool calls and the worker's executions into one trace", async () => {
    const { runId } = await cluster.client.send("trace me");
    await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const trace = await spansOfRun(runId, 7);
    const named = (name: string) => trace.filter((s) => s.name === name);
    const [run] = named("yiem.run");
    expect(run?.service).toBe("yiem-coordinator");
    expect(run?.parentSpanId).toBeUndefined();
    const llm = named("yiem.llm_call");
    expect(llm).toHaveLength(2);
    for (const span of llm) expect(span.parentSpanId).toBe(run?.spanId);
    const calls = named("yiem.tool_call");
    expect(calls.map((s) => s.attributes["yiem.tool_call_id"]).sort()).toEqual(["t1", "t2"]);
    for (const span of calls) expect(span.parentSpanId).toBe(run?.spanId);
    const executions = named("yiem.tool_execute");
    expect(executions).toHaveLength(2);
    for (const span of executions) {
      expect(span.service).toBe("yiem-worker");
      const parent = calls.find((c) => c.spanId === span.parentSpanId);
      expect(parent?.attributes["yiem.tool_call_id"]).toBe(span.attributes["yiem.tool_call_id"]);
      expect(span.attributes["yiem.worker_id"]).toBe("worker-1");
    }
  });
});
