import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest, ScriptedToolCall } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { otherToolsDir, useTestCluster } from "../support/cluster.js";

/** A call the model makes for each question (the last user message); else it echoes the results. */
const CALLS: Record<string, ScriptedToolCall[]> = {
  parallel: [
    { id: "p1", name: "sleepFor", arguments: { ms: 50, label: "left" } },
    { id: "p2", name: "sleepFor", arguments: { ms: 10, label: "right" } },
  ],
  sequential: [{ id: "s1", name: "whereAmI", arguments: {} }],
  badArgs: [{ id: "b1", name: "echoText", arguments: { text: 5 } }],
  shout: [{ id: "h1", name: "shoutText", arguments: { text: "quiet words" } }],
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

// The coordinator loads only the built-in tools: every test tool is announced by the workers.
const cluster = useTestCluster({
  workers: 1,
  coordinatorEnv: { YIEM_TOOLS_DIR: "" },
  model: { respond },
});

/** Resolves once the coordinator logged `message` naming `tool`. */
function coordinatorLogged(message: string, tool: string): Promise<string> {
  const coordinator = cluster.coordinators[0];
  if (!coordinator) throw new Error("no coordinator");
  return coordinator.waitForLine((line) => line.includes(message) && line.includes(`"${tool}"`));
}

/** Sends `question`, returns the answer text and the run's tool end events. */
async function ask(question: string) {
  const { sessionId, runId } = await cluster.client.send(question);
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
  const ends: BusEvent[] = [];
  for await (const event of cluster.client.events(sessionId, {
    fromStart: true,
    untilAgentEnd: true,
    runId,
  })) {
    if (event.type === "toolExecEnd") ends.push(event);
  }
  const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  return { text, ends, request: cluster.model.requests.at(-2) };
}

/** The tool names a model request offered. */
function offered(request: ScriptedRequest | undefined): string[] {
  const tools = (request?.body.tools ?? []) as Array<{ function: { name: string } }>;
  return tools.map((tool) => tool.function.name);
}

async function conflictMetric(): Promise<string | undefined> {
  const text = await (await fetch(`${cluster.coordinatorUrls[0]}/metrics`)).text();
  return text.match(/^yiem_tool_definition_conflicts (\d+)$/m)?.[1];
}

describe("a coordinator without a tool's code runs the tool's calls on the workers that announce it", () => {
  it("offers a worker-only tool to the model and runs its calls on workers in a parallel and in a sequential batch", async () => {
    await coordinatorLogged("announced tools added", "whereAmI");
    const parallel = await ask("parallel");
    expect(parallel.text).toBe("left done | right done");
    expect(offered(parallel.request)).toEqual(expect.arrayContaining(["getTime", "sleepFor"]));
    expect(parallel.ends.map((e) => e.type === "toolExecEnd" && e.workerId)).toEqual([
      "worker-1",
      "worker-1",
    ]);
    const sequential = await ask("sequential");
    expect(sequential.text).toBe(`pid ${cluster.workers[0]?.pid}`);
  });

  it("validates a worker-only tool's arguments against its announced schema, without a job", async () => {
    const { text, ends } = await ask("badArgs");
    expect(text).toMatch(/^echoText: .*text.*must be string/);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ isError: true, toolName: "echoText" });
    expect(ends[0] && "workerId" in ends[0] ? ends[0].workerId : undefined).toBeUndefined();
  });

  it("reports two workers announcing one tool with different definitions, and prepares a tool with its own prepareArguments on the worker", async () => {
    const warned = coordinatorLogged("tool definitions differ between workers", "echoText");
    await cluster.addWorkerWith({ YIEM_TOOLS_DIR: otherToolsDir });
    await warned;
    expect(await conflictMetric()).toBe("1");
    const cli = await runCli(["workers"], cluster.env);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^echoText\s+worker-1,worker-2\s+CONFLICT .*worker-2's is used/m);
    expect(cli.stdout).toMatch(/^sleepFor\s+worker-1\s+same$/m);
    expect(cli.stdout).toMatch(/^shoutText\s+worker-2\s+same$/m);
    await coordinatorLogged("announced tools added", "shoutText");
    const { text } = await ask("shout");
    expect(text).toBe("QUIET WORDS on worker-2"); // its schema takes capitals only
  });

  it("withdraws the tools of a worker that stopped: the model no longer sees them, and a call is an error result naming the tool", async () => {
    const withdrawn = coordinatorLogged("announced tools withdrawn", "shoutText");
    await cluster.workers[1]?.stop(3000);
    await withdrawn;
    expect(await conflictMetric()).toBe("0");
    const { text, request } = await ask("shout");
    expect(offered(request)).not.toContain("shoutText");
    expect(offered(request)).toContain("echoText");
    expect(text).toMatch(/^Tool "shoutText" not found/);
  });

  it("offers a new worker's tool as soon as the worker is ready, not at the coordinator's next periodic read", async () => {
    // The worker says on the control channel that its tools changed; the coordinator reads
    // the registry at once (else it waits up to 2 s, and this call found no tool).
    await cluster.addWorkerWith({ YIEM_TOOLS_DIR: otherToolsDir });
    const { text, request } = await ask("shout");
    expect(offered(request)).toContain("shoutText");
    expect(text).toMatch(/^QUIET WORDS on worker-\d+$/);
  });
});
