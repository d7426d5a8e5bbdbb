/**
 * The gateway's MCP server face (`POST /mcp`, Streamable HTTP, stateless), driven by the MCP
 * SDK's own client (`Client` + `StreamableHTTPClientTransport`) against two real gateway
 * processes on a real cluster (Redis, a coordinator, a worker): the agents a key may use
 * listed as tools, a call whose run makes two parallel tool calls answered with progress, one
 * client's requests answered by both gateways alike, scopes and agents held, a run waiting for
 * approval answered instead of held, a cancelled call's run aborted durably by the gateway
 * that did not answer the call (and a call whose cancellation came before it), a client that
 * goes away leaving its run running, and the docs' client snippet run as written.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAgentsYaml } from "../support/agentsYaml.js";
import { useTestCluster } from "../support/cluster.js";
import { readMarkdownSnippets } from "../support/markdownSnippets.js";
import { repoRoot } from "../support/processes.js";
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
 * The model of `helper`: `pair <x>` calls `sleepFor` twice at once (`<x>-1`, `<x>-2`, two
 * steps each); `slow <x>` calls `sleepFor` for 20 s; `approve <x>` calls `ledgerApproval`;
 * after tool results it answers `done: <results>`; else `hi <words>`. `ops` echoes.
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const last = textOf(messages.findLast((m) => m.role === "user")?.content);
  const [verb = "", label = "x"] = last.split(" ");
  if (String(request.body.model) === "ops-model") return { kind: "text", text: `ops: ${last}` };
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
  if (verb === "slow") return { kind: "toolCalls", calls: [sleep(`${label}-slow`, 20_000, 20)] };
  if (verb === "approve") {
    return {
      kind: "toolCalls",
      calls: [{ id: `call-${label}`, name: "ledgerApproval", arguments: { label } }],
    };
  }
  return { kind: "text", text: `hi ${messages.filter((m) => m.role === "user").length}` };
}

const agents = writeAgentsYaml([
  "agents:",
  "  helper:",
  "    instructions: You help.",
  "    description: Answers questions, running tools in parallel.",
  "    model: helper-model",
  "    tools: [sleepFor, ledgerApproval]",
  "  ops:",
  "    instructions: You run operations.",
  "    description: Runs operations.",
  "    model: ops-model",
  "    tools: []",
]);

const cluster = useTestCluster({ workers: 1, model: { respond }, env: { YIEM_AGENTS: agents } });

const alice = makeKey("alice", { scopes: ["submit", "read", "approve"] });
const onlyOps = makeKey("only-ops", { scopes: ["submit"], agents: ["ops"] });
const reader = makeKey("reader", { scopes: ["read"] });
let first: GatewayProcess;
let second: GatewayProcess;

beforeAll(async () => {
  const file = join(await mkdtemp(join(tmpdir(), "yiem-mcp-face-")), "keys.jsonl");
  await writeKeysFile(file, [alice, onlyOps, reader]);
  [first, second] = await Promise.all([
    startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: file }),
    startGatewayProcess({ ...cluster.env, YIEM_API_KEYS: file }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([first?.process.stop(3000), second?.process.stop(3000)]);
});

/** One HTTP request of an MCP client: the gateway it went to, and what it carried. */
interface Hop {
  gateway: string;
  /** The JSON-RPC method of its body, or the HTTP method of a request without one. */
  what: string;
}

/** Picks the gateway of a client's `n`th request, which carries `what`. */
type Pick = (what: string, n: number) => GatewayProcess;

const alternate: Pick = (_, n) => (n % 2 === 0 ? first : second);

/**
 * An MCP client of `key`, connected to the gateways' `/mcp`: each request to the gateway
 * `pick` names (the first by default), as a load balancer might; `hops` lists where each went.
 */
async function connect(key: TestKey, pick: Pick = () => first) {
  const hops: Hop[] = [];
  const fetchEach = (url: string | URL, init?: RequestInit) => {
    const body =
      typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string }) : {};
    const what = body.method ?? init?.method ?? "GET";
    const gateway = pick(what, hops.length);
    hops.push({ gateway: gateway.url, what });
    return fetch(new URL(new URL(url).pathname, gateway.url), init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key.secret}` } },
    fetch: fetchEach,
  });
  const client = new Client({ name: "mcp-face-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, hops, transport };
}

/** Where each request carrying `what` went. */
function gatewaysOf(hops: Hop[], what: string): string[] {
  return hops.filter((hop) => hop.what === what).map((hop) => hop.gateway);
}

/** The run id a call's first progress message names. */
function runIdOf(progress: Progress[]): string {
  const started = progress.find((p) => p.message?.startsWith("run "));
  const match = /^run (\S+) started/.exec(started?.message ?? "");
  if (!match?.[1]) throw new Error(`no run in ${JSON.stringify(progress)}`);
  return match[1];
}

/** Polls `GET /v1/runs/{runId}` until the run is completed or failed (20 s at most). */
async function finishedRun(runId: string) {
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    const answer = await callGateway(first.url, alice.secret, "GET", `/v1/runs/${runId}`);
    if (answer.body.status === "completed" || answer.body.status === "failed") return answer.body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`run ${runId} did not finish`);
}

/** The text of a call's result. */
function textContent(result: object): string {
  return "content" in result ? textOf(result.content) : "";
}

describe("MCP server face: POST /mcp", () => {
  it("lists the agents a key may use as tools, described, taking { message, sessionId? }", async () => {
    const { client } = await connect(alice);
    const { tools } = await client.listTools();
    const helper = tools.find((tool) => tool.name === "helper");
    expect(tools.map((tool) => tool.name).sort()).toEqual(["helper", "ops"]);
    expect(helper?.description).toBe("Answers questions, running tools in parallel.");
    expect(helper?.inputSchema.required).toEqual(["message"]);
    expect(Object.keys(helper?.inputSchema.properties ?? {}).sort()).toEqual([
      "message",
      "sessionId",
    ]);
    expect(helper?.outputSchema?.properties).toHaveProperty("runId");
    await client.close();

    const ops = await connect(onlyOps);
    expect((await ops.client.listTools()).tools.map((tool) => tool.name)).toEqual(["ops"]);
    await ops.client.close();
  });

  it("answers a call whose run makes two parallel tool calls, with progress from its tool events", async () => {
    const { client } = await connect(alice);
    const progress: Progress[] = [];
    const result = await client.callTool(
      { name: "helper", arguments: { message: "pair p" } },
      undefined,
      { onprogress: (p) => progress.push(p), timeout: 30_000 },
    );
    expect(result.isError).toBeFalsy();
    expect(textContent(result)).toBe("done: p-1 done | p-2 done");
    expect(result.structuredContent).toMatchObject({
      status: "completed",
      agent: "helper",
      runId: runIdOf(progress),
      stopReason: "stop",
      usage: { modelCalls: 2, toolCalls: 2 },
    });
    const messages = progress.map((p) => p.message ?? "");
    expect(messages.filter((m) => /^sleepFor started/.test(m))).toHaveLength(2);
    expect(messages.filter((m) => /^sleepFor progress/.test(m)).length).toBeGreaterThan(0);
    expect(messages.filter((m) => /^sleepFor done \(p-\d\) on /.test(m))).toHaveLength(2);
    const numbers = progress.map((p) => p.progress);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
    await client.close();
  });

  it("answers one client's requests from either gateway alike, and continues a session", async () => {
    const { client, hops } = await connect(alice, alternate);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("helper");
    const one = await client.callTool({ name: "helper", arguments: { message: "hello" } });
    const sessionId = (one.structuredContent as { sessionId: string }).sessionId;
    expect(textContent(one)).toBe("hi 1");
    const two = await client.callTool({
      name: "helper",
      arguments: { message: "hello again", sessionId },
    });
    expect(textContent(two)).toBe("hi 2");
    expect(two.structuredContent).toMatchObject({ sessionId, status: "completed" });
    expect(new Set(gatewaysOf(hops, "tools/call"))).toEqual(new Set([first.url, second.url]));
    await client.close();
  });

  it("holds scopes and agents: a key without submit is refused, another agent's tool is unknown", async () => {
    await expect(connect(reader)).rejects.toThrow(/403|submit/);
    const ops = await connect(onlyOps);
    const refused = await ops.client.callTool({ name: "helper", arguments: { message: "hello" } });
    expect(refused.isError).toBe(true);
    expect(textContent(refused)).toContain("helper");
    const own = await ops.client.callTool({ name: "ops", arguments: { message: "status" } });
    expect(textContent(own)).toBe("ops: status");
    await ops.client.close();
    const stranger = { ...alice, secret: "not-a-key" };
    await expect(connect(stranger)).rejects.toThrow(/401|unknown API key/);
  });

  it("is in the OpenAPI document, needs submit, and keeps no event stream of its own (GET: 405)", async () => {
    const doc = await callGateway(first.url, undefined, "GET", "/v1/openapi.json");
    expect(doc.body.paths["/mcp"].post["x-scope"]).toBe("submit");
    const get = await callGateway(first.url, alice.secret, "GET", "/mcp");
    expect(get.status).toBe(405);
  });

  it("answers a run waiting for approval with the call to decide, and the run goes on once decided", async () => {
    const { client } = await connect(alice);
    const result = await client.callTool({ name: "helper", arguments: { message: "approve m1" } });
    expect(result.isError).toBeFalsy();
    expect(textContent(result)).toContain("[awaiting approval]");
    expect(textContent(result)).toContain("POST /v1/approvals");
    const structured = result.structuredContent as {
      status: string;
      runId: string;
      sessionId: string;
      approvals: Array<{ sessionId: string; toolCallId: string; toolName: string }>;
    };
    expect(structured.status).toBe("awaiting_approval");
    expect(structured.approvals).toEqual([
      {
        sessionId: structured.sessionId,
        toolCallId: "call-m1",
        toolName: "ledgerApproval",
        reason: "ledgerApproval always requires approval",
      },
    ]);
    const decided = await callGateway(first.url, alice.secret, "POST", "/v1/approvals", {
      body: { sessionId: structured.sessionId, toolCallId: "call-m1", approved: true },
    });
    expect(decided.status).toBe(200);
    const run = await finishedRun(structured.runId);
    expect(run.result.response.content[0].text).toMatch(/^done: /);
    await client.close();
  });

  it("aborts a cancelled call's run durably, the cancellation taken by the other gateway", async () => {
    const cancelsElsewhere: Pick = (what) => (what === "notifications/cancelled" ? second : first);
    const { client, hops, transport } = await connect(alice, cancelsElsewhere);
    // Named on initialize, so its request ids are told from another client's of the same key.
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const progress: Progress[] = [];
    const cancel = new AbortController();
    const call = client.callTool({ name: "helper", arguments: { message: "slow c1" } }, undefined, {
      signal: cancel.signal,
      onprogress: (p) => {
        progress.push(p);
        if (p.message?.startsWith("sleepFor progress")) cancel.abort("enough");
      },
    });
    await expect(call).rejects.toThrow(/enough/);
    const run = await finishedRun(runIdOf(progress));
    expect(run.result.response.stopReason).toBe("aborted");
    expect(gatewaysOf(hops, "tools/call")).toEqual([first.url]);
    expect(gatewaysOf(hops, "notifications/cancelled")).toEqual([second.url]);
    await client.close();
  });

  it("cancels a call whose cancellation came first (as raw JSON-RPC): its run is aborted, it gets no answer", async () => {
    const post = (message: object) =>
      fetch(`${second.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${alice.secret}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
          "mcp-session-id": "raw-client",
        },
        body: JSON.stringify({ jsonrpc: "2.0", ...message }),
      });
    const cancelled = await post({
      method: "notifications/cancelled",
      params: { requestId: 7, reason: "changed my mind" },
    });
    expect(cancelled.status).toBe(202);
    const call = await post({
      id: 7,
      method: "tools/call",
      params: { name: "helper", arguments: { message: "slow r1" }, _meta: { progressToken: "p" } },
    });
    const stream = await call.text(); // ends without an answer
    expect(stream).not.toContain('"result"');
    const started = /run (\S+) started/.exec(stream);
    if (!started?.[1]) throw new Error(`no run started in ${stream}`);
    const run = await finishedRun(started[1]);
    expect(run.result.response.stopReason).toBe("aborted");
  });

  it("leaves the run running when the client goes away (disconnecting is not cancelling)", async () => {
    const { client } = await connect(alice);
    const progress: Progress[] = [];
    const call = client.callTool(
      { name: "helper", arguments: { message: "pair gone" } },
      undefined,
      {
        onprogress: (p) => {
          progress.push(p);
          if (p.message?.startsWith("sleepFor started")) void client.close();
        },
      },
    );
    await expect(call).rejects.toThrow();
    const run = await finishedRun(runIdOf(progress));
    expect(run.result.response.stopReason).toBe("stop");
    expect(run.result.response.content[0].text).toBe("done: gone-1 done | gone-2 done");
  });

  it("runs the MCP client of docs/GATEWAY.md as written", async () => {
    const snippet = readMarkdownSnippets("docs/GATEWAY.md").find((s) =>
      s.marker?.includes("mcpFace.test.ts: mcp client"),
    );
    if (!snippet) throw new Error("docs/GATEWAY.md: no snippet marked for mcpFace.test.ts");
    // Inside the repository, so the SDK resolves from its node_modules.
    const dir = join(repoRoot, "node_modules", ".cache", "yiem-mcp-snippet");
    await mkdir(dir, { recursive: true });
    const file = join(dir, "mcp-client.mts");
    await writeFile(file, snippet.code);
    const tsx = join(repoRoot, "node_modules", ".bin", "tsx");
    const env = { ...process.env, YIEM_GATEWAY: first.url, YIEM_KEY: alice.secret };
    const { stdout } = await promisify(execFile)(tsx, [file], { env, timeout: 60_000 });
    expect(stdout).toContain("helper: Answers questions, running tools in parallel.");
    expect(stdout).toMatch(/^1 run \S+ started: agent helper/m);
    expect(stdout).toContain('[{"type":"text","text":"hi 1"}]');
    expect(stdout).toContain('"status":"completed"');
  });
});
