/**
 * Hostile tool arguments against every kind of tool, on the coordinator and on a worker (issue
 * 34, findings 1 and 16): arguments nested 1,000 tree levels deep (they overflowed zod's
 * recursive parse: a rejected promise nothing awaited ended the coordinator, and the worker
 * for a worker-only tool) and 2,500 deep (they overflowed the reading of the model's answer:
 * the run ended). Each becomes that call's error result; the run finishes; no process ends or
 * logs an unhandled rejection; and every tool then serves a valid call. One cluster, every
 * row's run at once.
 */
import { fileURLToPath } from "node:url";
import { type AgentMessage, InvalidCoordinatorJobError } from "@yiem/core";
import {
  logEntries,
  type ScriptedReply,
  type ScriptedRequest,
  type ScriptedToolCall,
} from "@yiem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import { deepTreeArguments } from "../support/hostileTree.js";
import { hostileStdio, writeMcpConfig } from "../support/mcp/mcpServers.js";

const toolsDir = fileURLToPath(new URL("../support/hostileTools/", import.meta.url));
const workerToolsDir = fileURLToPath(
  new URL("../support/hostileTools/workerOnly/", import.meta.url),
);

/** One row: a kind of tool, where its calls are prepared and run, and a valid call of it. */
interface Row {
  kind: string;
  where: "coordinator" | "worker";
  tool: string;
  valid: Record<string, unknown>;
}

const tree = { root: { children: [{ children: [] }, {}] } };
const rows: Row[] = [
  { kind: "zod defineTool", where: "coordinator", tool: "treeZod", valid: tree },
  { kind: "zod defineTool", where: "worker", tool: "treeZodRemote", valid: tree },
  { kind: "JSON Schema tool", where: "coordinator", tool: "treeJson", valid: tree },
  { kind: "JSON Schema tool", where: "worker", tool: "treeJsonRemote", valid: tree },
  { kind: "MCP tool", where: "worker", tool: "hostile__tree", valid: tree },
  { kind: "writeTool", where: "coordinator", tool: "writeTool", valid: writeArgs("sumTree2") },
  { kind: "written tool", where: "worker", tool: "sumTree", valid: tree },
  { kind: "agent call", where: "coordinator", tool: "agent__helper", valid: { input: "hi" } },
];

/** The arguments of a `writeTool` call writing tool `name`. */
function writeArgs(name: string): Record<string, unknown> {
  return {
    name,
    label: name,
    description: "Says it ran",
    inputSchema: { type: "object", properties: { root: { type: "object" } } },
    executeCode: `return { content: [{ type: 'text', text: '${name} ran' }], details: {} };`,
  };
}

/** The calls the lead's model makes for a question: `hostile <tool>`, `valid <tool>`, `write`. */
function callsFor(question: string): ScriptedToolCall[] {
  const [what, tool = ""] = question.split(" ");
  if (what === "write") return [{ id: "w", name: "writeTool", arguments: writeArgs("sumTree") }];
  if (what === "valid") {
    const row = rows.find((r) => r.tool === tool);
    return [{ id: "v", name: tool, arguments: row?.valid ?? {} }];
  }
  return [
    { id: "d1000", name: tool, arguments: deepTreeArguments(1_000) },
    { id: "d2500", name: tool, arguments: deepTreeArguments(2_500) },
  ];
}

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (request.body.model === "helper-model") return { kind: "text", text: "helper ran" };
  if (messages.at(-1)?.role === "tool") return { kind: "text", text: "done" };
  const question = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  return { kind: "toolCalls", calls: callsFor(question) };
}

const cluster = useTestCluster(() =>
  Promise.resolve({
    workers: 1,
    model: { respond },
    env: {
      YIEM_ALLOW_WRITE_TOOL: "1",
      YIEM_AGENTS: writeAgentsYaml([
        "agents:",
        "  lead:",
        "    instructions: You lead.",
        "    model: lead-model",
        "    agents: [helper]",
        "  helper:",
        "    instructions: You help.",
        "    description: Helps.",
        "    model: helper-model",
        "    tools: []",
      ]),
    },
    coordinatorEnv: { YIEM_TOOLS_DIR: toolsDir },
    workerEnv: {
      YIEM_TOOLS_DIR: workerToolsDir,
      YIEM_MCP_CONFIG: writeMcpConfig({ hostile: hostileStdio("normal") }),
    },
  }),
);

/** Sends `question` to the lead; resolves with the run's tool results once it answered. */
async function ask(question: string) {
  const { sessionId, runId } = await cluster.client.send(question, { agent: "lead" });
  const response = await cluster.client.waitForResponse(runId, { timeoutMs: 60_000 });
  const transcript: AgentMessage[] = await cluster.client.messages(sessionId);
  const results = transcript.flatMap((m) =>
    m.role === "toolResult"
      ? [{ id: m.toolCallId, isError: m.isError, text: m.content.map(textOf).join("") }]
      : [],
  );
  return { response, results };
}

function textOf(block: { type: string; text?: string }): string {
  return block.type === "text" ? (block.text ?? "") : "";
}

beforeAll(async () => {
  // The written tool exists before its row's run.
  const { results } = await ask("write");
  expect(results[0]?.isError).toBe(false);
}, 60_000);

describe("hostile arguments to every kind of tool (issue 34, findings 1 and 16)", () => {
  it("makes each hostile call an error result, finishes every run, and ends or troubles no process", async () => {
    const outcomes = await Promise.all(rows.map((row) => ask(`hostile ${row.tool}`)));
    const table = rows.map((row, i) => ({
      row: `${row.kind} on the ${row.where}`,
      stopReason: outcomes[i]?.response.stopReason,
      results: outcomes[i]?.results,
    }));
    const deep = (tool: string) =>
      `${tool}: arguments are nested too deeply (limit 64 levels of objects and arrays)`;
    expect(table).toEqual(
      rows.map((row) => ({
        row: `${row.kind} on the ${row.where}`,
        stopReason: "stop",
        results: [
          { id: "d1000", isError: true, text: deep(row.tool) },
          { id: "d2500", isError: true, text: deep(row.tool) },
        ],
      })),
    );
    for (const process of [...cluster.coordinators, ...cluster.workers]) {
      expect(process.child.exitCode).toBeNull();
      expect(logEntries(process, "unhandled promise rejection; the process keeps serving")).toEqual(
        [],
      );
    }
  });

  it("refuses a run's input nesting 5,000 levels deep naming the field, before it is queued (finding 13)", async () => {
    let extra: unknown[] = [];
    for (let i = 0; i < 5_000; i++) extra = [extra];
    const input = { role: "user" as const, content: [{ type: "text", text: "x", extra }] };
    const sent = cluster.client.send(input as never, { agent: "lead" });
    await expect(sent).rejects.toThrow(InvalidCoordinatorJobError);
    await expect(sent).rejects.toThrow("input: nests objects and arrays more than 64 levels deep");
  });

  it("then serves a valid call of every tool", async () => {
    const outcomes = await Promise.all(rows.map((row) => ask(`valid ${row.tool}`)));
    const table = rows.map((row, i) => ({
      tool: row.tool,
      stopReason: outcomes[i]?.response.stopReason,
      isError: outcomes[i]?.results.map((r) => r.isError),
    }));
    expect(table).toEqual(
      rows.map((row) => ({ tool: row.tool, stopReason: "stop", isError: [false] })),
    );
    const texts = outcomes.map((outcome) => outcome.results[0]?.text);
    expect(texts).toEqual([
      "treeZod ran: 3 nodes",
      "treeZodRemote ran: 3 nodes",
      "treeJson ran: 3 nodes",
      "treeJsonRemote ran: 3 nodes",
      "tree ran",
      expect.stringMatching(/^Tool "sumTree2" saved as version 1/),
      "sumTree ran",
      "helper ran",
    ]);
  });
});
