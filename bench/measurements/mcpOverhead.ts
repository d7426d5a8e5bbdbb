import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  type AgentContext,
  type AgentToolCall,
  type AssistantMessage,
  executeToolCalls,
  readMcpConfig,
  startMcpToolSource,
  ToolStore,
} from "@yiem/core";
import { startTestRedis } from "@yiem/testing";
import { type InterleavedOptions, type Step, sampleInterleaved } from "../sampling/loop.js";
import { type Summary, summarize } from "../sampling/stats.js";
import {
  appendResults,
  type BenchSession,
  type Harness,
  openHarness,
  openSession,
} from "../setup/harness.js";
import { workerPool } from "../setup/workerPool.js";

/** Latencies of one `echo` call of `@modelcontextprotocol/server-everything` over stdio, by each path. */
export interface McpOverhead {
  /** The MCP SDK's `Client.callTool`, on a connection of its own to a server process of its own. */
  direct: Summary;
  /**
   * The same call as a Yiem tool (`everything__echo`, from `startMcpToolSource`) through the
   * in-process lifecycle: `executeToolCalls` with the default executor, no events, nothing
   * persisted; its own server process.
   */
  lifecycle: Summary;
  /**
   * The same call sent to a Yiem tool worker process that has the server
   * (`YIEM_MCP_CONFIG`), as the coordinator sends it (`createRemoteExecutor`, events
   * published, results appended), on a private Redis.
   */
  remote: Summary;
  /** How long the scenario took, start of its processes included (s; set by the full run). */
  durationS?: number;
}

const ECHO_TOOL = "everything__echo";
const noEmit = () => undefined;

/** The reference server's entry, run with this Node. */
function everythingEntry(): string {
  const require = createRequire(import.meta.url);
  return require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
}

/** A client of the SDK connected to a server process of its own. */
async function connectDirect(): Promise<Client> {
  const client = new Client({ name: "yiem-bench", version: "0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [everythingEntry(), "stdio"],
    stderr: "ignore",
  });
  await client.connect(transport);
  return client;
}

/** Writes a `YIEM_MCP_CONFIG` file with the server (its `echo` only); returns its path. */
function writeEchoConfig(): string {
  const file = join(mkdtempSync(join(tmpdir(), "yiem-bench-mcp-")), "mcp.json");
  const server = { command: process.execPath, args: [everythingEntry(), "stdio"] };
  const everything = { ...server, allowTools: ["echo"] };
  writeFileSync(file, JSON.stringify({ mcpServers: { everything } }));
  return file;
}

/** A tool store holding the server's `echo`, read from `file` as a worker reads it. */
function startEchoSource(store: ToolStore, file: string) {
  return startMcpToolSource({ config: readMcpConfig(file), toolStore: store });
}

let callCounter = 0;

/** One assistant message with one echo call, and that call. */
function echoCall(): { message: AssistantMessage; calls: AgentToolCall[] } {
  const call: AgentToolCall = {
    type: "function",
    id: `mcp_${++callCounter}`,
    name: ECHO_TOOL,
    arguments: { message: "bench" },
  };
  const message: AssistantMessage = {
    role: "assistant",
    content: [{ type: "toolCall", id: call.id, name: call.name, arguments: call.arguments }],
    stopReason: "toolUse",
    timestamp: Date.now(),
  };
  return { message, calls: [call] };
}

/** One echo call through the lifecycle (remote with `session`); throws on an error result. */
function lifecycleStep(store: ToolStore, remote?: { h: Harness; session: BenchSession }): Step {
  const context: AgentContext = { systemPrompt: "bench", messages: [], tools: store.tools };
  return async () => {
    const { message, calls } = echoCall();
    const batch = await executeToolCalls(
      context,
      message,
      calls,
      { toolExecution: "parallel", executor: remote?.session.remote },
      undefined,
      remote?.session.emit ?? noEmit,
    );
    if (remote) appendResults(remote.h, remote.session, batch.messages);
    const failed = batch.messages.find((m) => m.isError);
    if (failed) throw new Error(`an MCP bench call failed: ${JSON.stringify(failed.content)}`);
    return undefined;
  };
}

/** A private Redis, one Yiem worker process with the server, and the coordinator side. */
async function openRemote(file: string) {
  const redis = await startTestRedis({ privateServer: true });
  const pool = workerPool(redis.url, redis.prefix);
  const close = async (h?: Harness) => {
    await h?.close().catch(() => undefined);
    await pool.stop();
    await redis.stop();
  };
  try {
    await pool.add("yiem", { YIEM_MCP_CONFIG: file });
    const h = await openHarness(redis.url, redis.prefix);
    const session = await openSession(h, "mcp").catch(async (err: unknown) => {
      await close(h);
      throw err;
    });
    return { h, session, close: () => session.transcript.settle().then(() => close(h)) };
  } catch (err) {
    await close();
    throw err;
  }
}

/** One echo call through the SDK's client; throws on an error result. */
function directStep(client: Client): Step {
  return async () => {
    const result = await client.callTool({ name: "echo", arguments: { message: "bench" } });
    if (result.isError) throw new Error(`a direct MCP call failed: ${JSON.stringify(result)}`);
    return undefined;
  };
}

/**
 * Samples an MCP call's overhead: `echo` of the reference server over stdio, directly through
 * the SDK, as a Yiem tool through the in-process lifecycle, and as a remote call to a worker
 * process that has the server, in alternating blocks in the same run (each path with a server
 * process of its own, so none waits for another).
 */
export async function measureMcpOverhead(bounds: InterleavedOptions): Promise<McpOverhead> {
  const store = new ToolStore({ name: "benchMcp" });
  const file = writeEchoConfig();
  const [client, source, remote] = await Promise.all([
    connectDirect(),
    startEchoSource(store, file),
    openRemote(file),
  ]);
  try {
    if (!store.tools.has(ECHO_TOOL)) throw new Error(`the MCP tool source has no ${ECHO_TOOL}`);
    const samples = await sampleInterleaved(
      {
        direct: directStep(client),
        lifecycle: lifecycleStep(store),
        remote: lifecycleStep(store, remote),
      },
      bounds,
    );
    return {
      direct: summarize(samples.direct ?? []),
      lifecycle: summarize(samples.lifecycle ?? []),
      remote: summarize(samples.remote ?? []),
    };
  } finally {
    await Promise.all([client.close(), source.close(), remote.close()]);
  }
}
