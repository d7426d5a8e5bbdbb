import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest, ScriptedToolCall, TestProcess } from "@yiem/testing";
import { afterAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import {
  everythingStdio,
  startEverythingHttp,
  waitFor,
  writeMcpConfig,
} from "../support/mcp/mcpServers.js";

const LONG = "everything__trigger-long-running-operation";

/** The calls the model makes for each question (the last user message); else it echoes the results. */
const CALLS: Record<string, ScriptedToolCall[]> = {
  both: [
    { id: "e1", name: "everything__echo", arguments: { message: "hello cluster" } },
    { id: "l1", name: LONG, arguments: { duration: 0.4, steps: 4 } },
  ],
  long: [{ id: "a1", name: LONG, arguments: { duration: 30, steps: 30 } }],
  http: [{ id: "h1", name: "web__echo", arguments: { message: "over http" } }],
};

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: results.join(" | ") };
  }
  const calls = CALLS[String(last?.content ?? "")];
  return calls ? { kind: "toolCalls", calls } : { kind: "text", text: "no calls" };
}

let httpServer: TestProcess | undefined;

// The worker has the MCP servers (stdio and Streamable HTTP); the coordinator has no MCP
// config and no tool files: it knows the MCP tools from the worker's announcement only.
const cluster = useTestCluster(async () => {
  const http = await startEverythingHttp();
  httpServer = http.server;
  const config = writeMcpConfig({
    everything: everythingStdio({ allowTools: ["echo", "trigger-long-running-operation"] }),
    web: { url: http.url, allowTools: ["echo"] },
  });
  return {
    workers: 1,
    workerEnv: { YIEM_MCP_CONFIG: config },
    coordinatorEnv: { YIEM_TOOLS_DIR: "" },
    model: { respond },
  };
});

afterAll(async () => {
  await httpServer?.stop(1000);
});

/** The tool names a model request offered. */
function offered(request: ScriptedRequest | undefined): string[] {
  const tools = (request?.body.tools ?? []) as Array<{ function: { name: string } }>;
  return tools.map((tool) => tool.function.name);
}

/** Every event of a run, up to its agent end. */
async function eventsOf(sessionId: string, runId: string): Promise<BusEvent[]> {
  const events: BusEvent[] = [];
  for await (const event of cluster.client.events(sessionId, {
    fromStart: true,
    untilAgentEnd: true,
    runId,
  })) {
    events.push(event);
  }
  return events;
}

function textOf(content: Array<{ type: string; text?: string }>): string {
  return content.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

/** Resolves once the coordinator logged that the worker's announced tools include `tool`. */
function coordinatorKnows(tool: string): Promise<string> {
  const coordinator = cluster.coordinators[0];
  if (!coordinator) throw new Error("no coordinator");
  return coordinator.waitForLine(
    (line) => line.includes("announced tools added") && line.includes(`"${tool}"`),
    20_000,
  );
}

describe("MCP tools of a worker, run through a cluster whose coordinator has no MCP config", () => {
  it("offers the worker's MCP tools to the model, runs an echo and a progress-reporting call in one run, and relays the progress", async () => {
    await Promise.all([coordinatorKnows("everything__echo"), coordinatorKnows("web__echo")]);
    const { sessionId, runId } = await cluster.client.send("both");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(offered(cluster.model.requests.at(-2))).toEqual(
      expect.arrayContaining(["everything__echo", LONG, "web__echo"]),
    );
    expect(textOf(response.content)).toBe(
      "Echo: hello cluster | Long running operation completed. Duration: 0.4 seconds, Steps: 4.",
    );
    const events = await eventsOf(sessionId, runId);
    const updates = events.filter((e) => e.type === "toolExecUpdate" && e.toolCallId === "l1");
    expect(updates.length).toBeGreaterThanOrEqual(1);
    // The server's progress notifications, in order (the last may race its result and be dropped).
    const progress = updates.map((e) =>
      e.type === "toolExecUpdate" ? e.partialResult : undefined,
    );
    expect(progress[0]).toEqual(expect.objectContaining({ progress: 1, total: 4 }));
    expect(progress.every((p) => (p as { total?: number }).total === 4)).toBe(true);
    const ends = events.filter((e) => e.type === "toolExecEnd");
    expect(ends.map((e) => (e.type === "toolExecEnd" ? [e.toolName, e.workerId] : []))).toEqual(
      expect.arrayContaining([
        ["everything__echo", "worker-1"],
        [LONG, "worker-1"],
      ]),
    );
  });

  it("ends a long MCP call as aborted when its session is aborted, and the run with stopReason aborted", async () => {
    const { sessionId, runId } = await cluster.client.send("long");
    const seen: BusEvent[] = [];
    const watching = (async () => {
      for await (const event of cluster.client.events(sessionId, {
        fromStart: true,
        untilAgentEnd: true,
        runId,
      })) {
        seen.push(event);
      }
    })();
    await waitFor("a progress event of the long call", () =>
      seen.some((e) => e.type === "toolExecUpdate" && e.toolCallId === "a1"),
    );
    await cluster.client.abort(sessionId);
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.stopReason).toBe("aborted");
    await watching;
    const end = seen.find((e) => e.type === "toolExecEnd" && e.toolCallId === "a1");
    expect(end).toMatchObject({ type: "toolExecEnd", isError: true, toolName: LONG });
    expect(end).toMatchObject({
      result: { content: [{ type: "text", text: "Operation aborted" }] },
    });
  });

  it("runs a call of an MCP server the worker reaches over Streamable HTTP", async () => {
    const { runId } = await cluster.client.send("http");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(textOf(response.content)).toBe("Echo: over http");
  });
});
