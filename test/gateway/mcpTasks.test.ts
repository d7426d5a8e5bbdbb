/**
 * The MCP face's tasks (MCP's tasks extension on `POST /mcp`), driven by the MCP SDK's own
 * client (`client.experimental.tasks`) against two real gateway processes on a real cluster:
 * a task-augmented call answered at once with its run's task, followed and its result read on
 * the other gateway; a task whose gateway is SIGKILLed while the client waits, read on the
 * other (the run ran once); a call awaiting approval seen as `input_required`, then decided;
 * `tasks/cancel` as the durable abort; `tasks/list` listing the key's own tasks on any gateway,
 * 20 a page past 20 tasks; another key finding (and listing) no task.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import {
  callGateway,
  type GatewayProcess,
  makeKey,
  startGatewayProcess,
  type TestKey,
  textOf,
  type Wire,
  writeKeysFile,
} from "./support.js";

/**
 * The model of `helper`: `pair <x>` calls `sleepFor` twice at once; `slow <x>` calls it for
 * 4 s; `long <x>` for 20 s; `approve <x>` calls `ledgerApproval`; after tool results it
 * answers `done: <results>`; else `hi`.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const last = textOf(messages.findLast((m) => m.role === "user")?.content);
  const [verb = "", label = "x"] = last.split(" ");
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
    return { kind: "text", text: `done: ${results.join(" | ")}` };
  }
  const sleep = (id: string, ms: number, steps: number) => ({
    id,
    name: "sleepFor",
    arguments: { ms, steps, label: id },
  });
  if (verb === "pair") {
    return { kind: "toolCalls", calls: [sleep(`${label}-1`, 600, 2), sleep(`${label}-2`, 600, 2)] };
  }
  if (verb === "slow") return { kind: "toolCalls", calls: [sleep(`${label}-slow`, 4000, 4)] };
  if (verb === "long") return { kind: "toolCalls", calls: [sleep(`${label}-long`, 20_000, 20)] };
  if (verb === "approve") {
    return {
      kind: "toolCalls",
      calls: [{ id: `call-${label}`, name: "ledgerApproval", arguments: { label } }],
    };
  }
  return { kind: "text", text: "hi" };
}

const agents = writeAgentsYaml([
  "agents:",
  "  helper:",
  "    instructions: You help.",
  "    description: Answers questions, running tools in parallel.",
  "    model: helper-model",
  "    tools: [sleepFor, ledgerApproval]",
]);

const cluster = useTestCluster({ workers: 1, model: { respond }, env: { YIEM_AGENTS: agents } });

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const carol = makeKey("carol", { scopes: ["submit", "read"] });
const dave = makeKey("dave", { scopes: ["submit", "read"] });
let keysFile = "";
let first: GatewayProcess;
let second: GatewayProcess;

beforeAll(async () => {
  keysFile = join(await mkdtemp(join(tmpdir(), "yiem-mcp-tasks-")), "keys.jsonl");
  await writeKeysFile(keysFile, [alice, carol, dave]);
  [first, second] = await Promise.all([
    startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: keysFile }),
    startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: keysFile }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([first?.process.stop(3000), second?.process.stop(3000)]);
});

/** Picks the gateway of a request carrying JSON-RPC method `what`. */
type Pick = (what: string) => GatewayProcess;

/** An MCP client of `key`: each request to the gateway `pick` names; `hops` lists where. */
async function connect(key: TestKey, pick: Pick) {
  const hops: Array<{ gateway: string; what: string }> = [];
  const fetchEach = (url: string | URL, init?: RequestInit) => {
    const body =
      typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string }) : {};
    const what = body.method ?? init?.method ?? "GET";
    const gateway = pick(what);
    hops.push({ gateway: gateway.url, what });
    return fetch(new URL(new URL(url).pathname, gateway.url), init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key.secret}` } },
    fetch: fetchEach,
  });
  const client = new Client({ name: "mcp-tasks-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, hops };
}

/** Starts `message` as a task of `helper` (a task-augmented `tools/call`). */
async function startTask(client: Client, message: string): Promise<Task> {
  const created = await client.request(
    {
      method: "tools/call",
      params: { name: "helper", arguments: { message }, task: { ttl: 60_000 } },
    },
    CreateTaskResultSchema,
  );
  return created.task;
}

/** Polls `tasks/get` until the task is in one of `statuses` (30 s at most); the ones seen. */
async function pollUntil(client: Client, taskId: string, statuses: string[]) {
  const seen: string[] = [];
  for (const until = Date.now() + 30_000; Date.now() < until; ) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (seen.at(-1) !== task.status) seen.push(task.status);
    if (statuses.includes(task.status)) return { task, seen };
    await new Promise((resolve) => setTimeout(resolve, task.pollInterval ?? 500));
  }
  throw new Error(`task ${taskId} never reached ${statuses.join("/")}: ${seen.join(", ")}`);
}

/** The text of a call's result. */
function textContent(result: object): string {
  return "content" in result ? textOf(result.content) : "";
}

describe("MCP tasks on POST /mcp", () => {
  it("advertises tasks, lists the tools as taking a task optionally", async () => {
    const { client } = await connect(alice, () => first);
    expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === "helper")?.execution?.taskSupport).toBe("optional");
    await client.close();
  });

  it("answers a task-augmented call at once, and the other gateway follows it to its result (two parallel tool calls)", async () => {
    const callsHere: Pick = (what) => (what === "tools/call" ? first : second);
    const { client, hops } = await connect(alice, callsHere);
    const messages = [];
    const stream = client.experimental.tasks.callToolStream(
      { name: "helper", arguments: { message: "pair t" } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    for await (const message of stream) messages.push(message);
    const created = messages[0];
    if (created?.type !== "taskCreated") throw new Error(`no task: ${JSON.stringify(messages)}`);
    expect(created.task.status).toBe("working");
    const statuses = messages.flatMap((m) => (m.type === "taskStatus" ? [m.task.status] : []));
    expect(statuses.at(-1)).toBe("completed");
    const last = messages.at(-1);
    if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
    expect(textContent(last.result)).toBe("done: t-1 done | t-2 done");
    expect(last.result.structuredContent).toMatchObject({
      status: "completed",
      agent: "helper",
      runId: created.task.taskId,
      usage: { modelCalls: 2, toolCalls: 2 },
    });
    const where = (what: string) =>
      new Set(hops.filter((h) => h.what === what).map((h) => h.gateway));
    expect(where("tools/call")).toEqual(new Set([first.url]));
    expect(where("tasks/get")).toEqual(new Set([second.url]));
    expect(where("tasks/result")).toEqual(new Set([second.url]));
    // The task is the run: the REST face sees the same one.
    const run = await callGateway(
      first.url,
      alice.secret,
      "GET",
      `/v1/runs/${created.task.taskId}`,
    );
    expect(run.body.status).toBe("completed");
    await client.close();
  }, 60_000);

  it("reads the result on the other gateway after the one the client waited on is SIGKILLed (the run ran once)", async () => {
    const doomed = await startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: keysFile });
    const { client } = await connect(alice, () => doomed);
    const task = await startTask(client, "slow k1");
    await pollUntil(client, task.taskId, ["working"]);
    // The client's wait ends with the gateway (its stream cut; the SDK gives up after 8 s).
    const waiting = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, {
      timeout: 8_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    doomed.process.signal("SIGKILL");
    await expect(waiting).rejects.toThrow();
    const other = await connect(alice, () => second);
    const result = await other.client.experimental.tasks.getTaskResult(
      task.taskId,
      CallToolResultSchema,
      { timeout: 30_000 },
    );
    expect(textContent(result)).toBe("done: k1-slow done");
    const sessionId = (result.structuredContent as { sessionId: string }).sessionId;
    const users = (await cluster.client.messages(sessionId)).filter((m) => m.role === "user");
    expect(users).toHaveLength(1);
    await other.client.close();
    await doomed.process.stop(3000);
  }, 90_000);

  it("reports a call awaiting approval as input_required, and completes once decided through POST /v1/approvals", async () => {
    const { client } = await connect(alice, () => first);
    const task = await startTask(client, "approve a1");
    const parked = await pollUntil(client, task.taskId, ["input_required", "completed"]);
    expect(parked.task.status).toBe("input_required");
    expect(parked.task.statusMessage).toContain("ledgerApproval (call-a1)");
    const sessionId = /in session (\S+):/.exec(parked.task.statusMessage ?? "")?.[1];
    const decided = await callGateway(second.url, alice.secret, "POST", "/v1/approvals", {
      body: { sessionId, toolCallId: "call-a1", approved: true },
    });
    expect(decided.status).toBe(200);
    const done = await pollUntil(client, task.taskId, ["completed", "failed"]);
    expect(done.task.status).toBe("completed");
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textContent(result)).toMatch(/^done: /);
    await client.close();
  }, 60_000);

  it("cancels a task from the other gateway: the durable abort, the task cancelled", async () => {
    const { client } = await connect(alice, () => first);
    const task = await startTask(client, "long c1");
    await pollUntil(client, task.taskId, ["working"]);
    const other = await connect(alice, () => second);
    const cancelled = await other.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe("cancelled");
    const ended = await pollUntil(client, task.taskId, ["cancelled", "completed", "failed"]);
    expect(ended.task.status).toBe("cancelled");
    const run = await callGateway(first.url, alice.secret, "GET", `/v1/runs/${task.taskId}`);
    expect(run.body.result.response.stopReason).toBe("aborted");
    await expect(other.client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(
      /terminal/,
    );
    await client.close();
    await other.client.close();
  }, 60_000);

  it("keeps a task its key's own: another key finds no task to get, read or cancel", async () => {
    const { client } = await connect(alice, () => first);
    const task = await startTask(client, "hello");
    await pollUntil(client, task.taskId, ["completed"]);
    const carols = await connect(carol, () => second);
    const tasks = carols.client.experimental.tasks;
    await expect(tasks.getTask(task.taskId)).rejects.toThrow(/not found/i);
    await expect(tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toThrow(
      /not found/i,
    );
    await expect(tasks.cancelTask(task.taskId)).rejects.toThrow(/not found/i);
    await expect(carols.client.experimental.tasks.getTask("no-such-run")).rejects.toThrow(
      /not found/i,
    );
    await client.close();
    await carols.client.close();
  }, 60_000);

  it("lists the key's own tasks on any gateway, newest first; another key lists none of them", async () => {
    const { client } = await connect(alice, () => first);
    const older = await startTask(client, "hello");
    const other = await connect(alice, () => second);
    const newer = await startTask(other.client, "approve l1");
    await pollUntil(other.client, newer.taskId, ["input_required"]);
    const { tasks } = await client.experimental.tasks.listTasks();
    const ids = tasks.map((task) => task.taskId);
    expect(ids.indexOf(newer.taskId)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(newer.taskId)).toBeLessThan(ids.indexOf(older.taskId));
    expect(tasks.find((task) => task.taskId === newer.taskId)?.status).toBe("input_required");
    const carols = await connect(carol, () => second);
    // Carol made no task in this file: her list is empty, then holds her one task.
    const before = await carols.client.experimental.tasks.listTasks();
    expect(before.tasks).toEqual([]);
    const own = await startTask(carols.client, "hello");
    const after = await carols.client.experimental.tasks.listTasks();
    expect(after.tasks.map((task) => task.taskId)).toEqual([own.taskId]);
    // A cursor of another key's task (or none) is refused, not a way to page its list.
    await expect(carols.client.experimental.tasks.listTasks(older.taskId)).rejects.toThrow(
      /cursor/,
    );
    const sessionId = /in session (\S+):/.exec(
      tasks.find((task) => task.taskId === newer.taskId)?.statusMessage ?? "",
    )?.[1];
    await callGateway(first.url, alice.secret, "POST", "/v1/approvals", {
      body: { sessionId, toolCallId: "call-l1", approved: true },
    });
    await pollUntil(client, newer.taskId, ["completed"]);
    await Promise.all([client.close(), other.client.close(), carols.client.close()]);
  }, 60_000);

  it("pages the key's tasks 20 at a time, newest first, on any gateway; a task made while paging does not move the pages", async () => {
    const { client } = await connect(dave, () => first);
    const other = await connect(dave, () => second);
    const made: string[] = [];
    for (let n = 0; n < 23; n++) {
      const task = await startTask(n % 2 === 0 ? client : other.client, "hello");
      made.push(task.taskId);
    }
    const newestFirst = [...made].reverse();
    const page1 = await client.experimental.tasks.listTasks();
    expect(page1.tasks.map((task) => task.taskId)).toEqual(newestFirst.slice(0, 20));
    expect(page1.nextCursor).toBe(newestFirst[19]);
    const later = await startTask(client, "hello");
    const page2 = await other.client.experimental.tasks.listTasks(page1.nextCursor);
    expect(page2.tasks.map((task) => task.taskId)).toEqual(newestFirst.slice(20));
    expect(page2.nextCursor).toBeUndefined();
    const again = await other.client.experimental.tasks.listTasks();
    expect(again.tasks.map((task) => task.taskId)).toEqual([
      later.taskId,
      ...newestFirst.slice(0, 19),
    ]);
    await pollUntil(client, later.taskId, ["completed"]);
    await Promise.all([client.close(), other.client.close()]);
  }, 90_000);
});
