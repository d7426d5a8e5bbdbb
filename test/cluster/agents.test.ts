/**
 * Named agents in one deployment (`YIEM_AGENTS`): three agents with their own prompts,
 * models, servers and tools, served by real coordinator processes. Each model request names
 * its agent's model with its settings and offers only its tools; a call to another agent's
 * tool is "not found"; requests name their agent from any BullMQ client; unknown agents and
 * sessions of another agent fail once; `yiem agents` and `yiem send --agent` as processes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  logMessage,
  type ScriptedModelServer,
  type ScriptedReply,
  type ScriptedRequest,
  startScriptedModelServer,
} from "@yiem/testing";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cliProcess.js";
import { useTestCluster } from "../support/cluster.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";
import { spawnApp } from "../support/processes.js";

type Message = { role: string; content: unknown };

/** The tool names a model request offered. */
function offeredTools(request: ScriptedRequest): string[] {
  const tools = (request.body.tools ?? []) as Array<{ function: { name: string } }>;
  return tools.map((tool) => tool.function.name).sort();
}

/** The system prompt of a model request. */
function systemPrompt(request: ScriptedRequest): unknown {
  return ((request.body.messages ?? []) as Message[]).find((m) => m.role === "system")?.content;
}

/** "call <tool>" asks for that tool; after a tool result, its text is the answer; else an echo. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Message[];
  const last = messages.at(-1);
  if (last?.role === "tool") return { kind: "text", text: `tool said: ${String(last.content)}` };
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  if (request.body.model === "reporter-model" && input === "report")
    return { kind: "text", text: '{"city":"Oslo","degrees":4}' };
  const call = /^call (\w+)/.exec(input);
  if (call?.[1]) return { kind: "toolCalls", calls: [{ name: call[1], arguments: {} }] };
  return { kind: "text", text: `${request.body.model}: ${input}` };
}

let opsModel: ScriptedModelServer | undefined;
afterAll(async () => opsModel?.close());

/** The agents file: support on the cluster's model server, ops on a server of its own. */
async function agentsFile(): Promise<string> {
  opsModel = await startScriptedModelServer({ respond });
  const dir = mkdtempSync(join(tmpdir(), "yiem-agents-"));
  const path = join(dir, "agents.yaml");
  writeFileSync(
    path,
    [
      "agents:",
      "  default:",
      "    instructions: You are the default agent.",
      "    model: default-model",
      "  support:",
      "    instructions: You help customers.",
      "    model: support-model",
      "    modelSettings: { temperature: 0.2, maxTokens: 800 }",
      "    tools: [whereAmI, listTools]",
      "    maxTurns: 5",
      "  ops:",
      "    instructions: You run operations.",
      "    model: ops-model",
      `    baseURL: ${opsModel.baseURL}`,
      "    apiKeyEnv: OPS_TEST_KEY",
      "    tools: [getTime]",
      "  reporter:",
      "    instructions: You report as JSON.",
      "    model: reporter-model",
      "    tools: [getTime]",
      "    outputSchema:",
      "      type: object",
      "      properties: { city: { type: string }, degrees: { type: number } }",
      "      required: [city, degrees]",
      "    budget: { maxModelCalls: 1 }",
    ].join("\n"),
  );
  return path;
}

const cluster = useTestCluster(async () => ({
  workers: 0,
  model: { respond },
  env: { YIEM_AGENTS: await agentsFile(), OPS_TEST_KEY: "sk-ops-test-key" },
}));

const plain = usePlainCoordinatorQueue(cluster);

/** Adds a request with plain bullmq (attempts: 3, so a retry would show) and waits for it. */
async function ask(data: Record<string, unknown>) {
  const job = await plain.queue.add("ask", data, { attempts: 3 });
  const settled = await job.waitUntilFinished(plain.events, 20_000).then(
    (result: { sessionId: string; runId: string; agent: string }) => ({ result, error: undefined }),
    (error: Error) => ({ result: undefined, error }),
  );
  return { job: await plain.queue.getJob(job.id ?? ""), ...settled };
}

describe("two agents in one deployment", () => {
  it("offers each agent only its tools, under its own model name, settings and server", async () => {
    const before = cluster.model.requests.length;
    const { sessionId, runId } = await cluster.client.send("call whereAmI", { agent: "support" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([
      { type: "text", text: expect.stringMatching(/^tool said: pid \d+/) },
    ]);
    const requests = cluster.model.requests.slice(before);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.body.model).toBe("support-model");
      expect(request.body.temperature).toBe(0.2);
      expect(request.body.max_tokens).toBe(800);
      expect(offeredTools(request)).toEqual(["listTools", "whereAmI"]);
      expect(systemPrompt(request)).toBe("You help customers.");
    }
    const events = [];
    for await (const event of cluster.client.events(sessionId, {
      fromStart: true,
      untilAgentEnd: true,
      runId,
    }))
      events.push(event);
    expect(events.find((e) => e.type === "agentStart")).toMatchObject({ agent: "support" });
  });

  it("lists only the agent's own tools to its model through listTools", async () => {
    const { runId } = await cluster.client.send("call listTools", { agent: "support" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    const text = (response.content[0] as { text: string }).text;
    expect(text.split("\n").sort()).toEqual([
      expect.stringMatching(/^- listTools: /),
      expect.stringMatching(/^- whereAmI: /),
      "tool said: Available tools:",
    ]);
    expect(text).not.toContain("getTime");
  });

  it("answers a call to another agent's tool with tool not found, listing the agent's own", async () => {
    const { runId } = await cluster.client.send("call whereAmI", { agent: "ops" });
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([
      {
        type: "text",
        text: 'tool said: Tool "whereAmI" not found. Available tools: getTime',
      },
    ]);
    const requests = opsModel?.requests ?? [];
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) {
      expect(request.body.model).toBe("ops-model");
      expect(request.body.temperature).toBeUndefined();
      expect(offeredTools(request)).toEqual(["getTime"]);
      expect(request.headers.authorization).toBe("Bearer sk-ops-test-key");
    }
  });
});

describe("requests from a plain BullMQ producer", () => {
  it("name their agent and get it back with the answer", async () => {
    const { result, error } = await ask({ agent: "ops", input: "hello" });
    expect(error).toBeUndefined();
    expect(result?.agent).toBe("ops");
    const noAgent = await ask({ input: "hello" });
    expect(noAgent.result?.agent).toBe("default");
  });

  it("fail once, naming the field, for an unknown agent", async () => {
    const { job, error } = await ask({ agent: "x", input: "hello" });
    expect(error?.message).toBe(
      'invalid request: agent: unknown agent "x" (known: default, ops, reporter, support)',
    );
    expect(job?.attemptsMade).toBe(1);
  });

  it("fail once for a session that belongs to another agent", async () => {
    const first = await ask({ agent: "support", sessionId: "s-agents-1", input: "hi" });
    expect(first.result?.agent).toBe("support");
    const { job, error } = await ask({ agent: "ops", sessionId: "s-agents-1", input: "hi" });
    expect(error?.message).toBe(
      'invalid request: agent: session s-agents-1 belongs to agent "support"',
    );
    expect(job?.attemptsMade).toBe(1);
    const again = await ask({ agent: "support", sessionId: "s-agents-1", input: "again" });
    expect(again.result?.agent).toBe("support");
  });
});

describe("an agent's structured output and budget", () => {
  it("asks the model for its schema and returns the validated output to a plain BullMQ producer", async () => {
    const before = cluster.model.requests.length;
    const { result, error } = await ask({ agent: "reporter", input: "report" });
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ agent: "reporter", output: { city: "Oslo", degrees: 4 } });
    const [request] = cluster.model.requests.slice(before);
    expect(request?.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { schema: { required: ["city", "degrees"] } },
    });
  });

  it("stops a run that reached the agent's budget before its next model call", async () => {
    const before = cluster.model.requests.length;
    const { result, error } = await ask({ agent: "reporter", input: "call getTime" });
    expect(error).toBeUndefined();
    const answer = result as unknown as {
      response: { stopReason: string; content: Array<{ text: string }> };
      usage: { modelCalls: number; toolCalls: number };
    };
    expect(answer.response.stopReason).toBe("budget");
    expect(answer.response.content[0]?.text).toContain("maxModelCalls");
    expect(answer.usage).toMatchObject({ modelCalls: 1, toolCalls: 1 });
    expect(cluster.model.requests.length - before).toBe(1);
  });
});

describe("the command line", () => {
  it("lists the agents with their models, tools and coordinators", async () => {
    const run = await runCli(["agents"], cluster.env);
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^AGENT\s+MODEL\s+TOOLS\s+COORDINATORS$/);
    expect(lines.find((l) => l.startsWith("ops"))).toMatch(/^ops\s+ops-model\s+getTime\s+\S+/);
    expect(lines.find((l) => l.startsWith("support"))).toMatch(/support-model\s+whereAmI/);
    expect(lines.find((l) => l.startsWith("default"))).toMatch(/default-model\s+\(all\)/);
    expect(run.stdout).not.toContain("disagree");
  });

  it("sends to the agent named with --agent, and reports an unknown one", async () => {
    const sent = await runCli(["send", "--agent", "ops", "ping"], cluster.env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain("ops-model: ping");
    const unknown = await runCli(["send", "--agent", "nobody", "ping"], cluster.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'unknown agent "nobody" (known: default, ops, reporter, support)',
    );
  });
});

describe("coordinators whose definitions differ", () => {
  it("log the disagreement, and yiem agents shows it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "yiem-agents-other-")), "agents.json");
    writeFileSync(
      path,
      JSON.stringify({ agents: { default: { instructions: "x", model: "m2" } } }),
    );
    const other = await cluster.addCoordinatorWith({ YIEM_AGENTS: path });
    await other.waitForLine(
      logMessage("coordinators disagree on the agent definitions (see yiem agents)"),
    );
    const run = await runCli(["agents"], cluster.env);
    expect(run.stdout).toContain("warning: the coordinators disagree on the agent definitions");
    expect(run.stdout).toMatch(/^default\s+m2\s+\(all\)/m);
    await other.stop(3000);
  });
});

describe("an invalid agents file", () => {
  it("stops the coordinator at start, naming the file, the agent and the field", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "yiem-agents-bad-")), "agents.json");
    const bad = {
      agents: { ops: { instructions: "x", model: "m", modelSettings: { temperature: "hot" } } },
    };
    writeFileSync(path, JSON.stringify(bad));
    const coordinator = spawnApp("apps/coordinator/src/main.ts", {
      ...cluster.env,
      YIEM_AGENTS: path,
      PORT: String(await freePort()),
    });
    expect(await coordinator.exited).toBe(1);
    expect(coordinator.lines.join("\n")).toContain(
      `${path}: agent "ops": modelSettings.temperature: must be a number`,
    );
  });
});
