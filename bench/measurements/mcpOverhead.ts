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
import { type InterleavedOptions, type Step, sampleInterleaved } from "../sampling/loop.js";
import { type Summary, summarize } from "../sampling/stats.js";

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

/** A tool store holding the server's `echo` (`YIEM_MCP_CONFIG`'s format, read as a worker reads it). */
async function startEchoSource(store: ToolStore) {
  const file = join(mkdtempSync(join(tmpdir(), "yiem-bench-mcp-")), "mcp.json");
  const server = { command: process.execPath, args: [everythingEntry(), "stdio"] };
  writeFileSync(
    file,
    JSON.stringify({ mcpServers: { everything: { ...server, allowTools: ["echo"] } } }),
  );
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

/** One echo call through the lifecycle; throws on an error result. */
function lifecycleStep(store: ToolStore): Step {
  const context: AgentContext = { systemPrompt: "bench", messages: [], tools: store.tools };
  return async () => {
    const { message, calls } = echoCall();
    const batch = await executeToolCalls(
      context,
      message,
      calls,
      { toolExecution: "parallel", executor: undefined },
      undefined,
      noEmit,
    );
    const failed = batch.messages.find((m) => m.isError);
    if (failed) throw new Error(`an MCP bench call failed: ${JSON.stringify(failed.content)}`);
    return undefined;
  };
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
 * the SDK and as a Yiem tool through the in-process lifecycle, in alternating blocks in the
 * same run (each path with a server process of its own, so neither waits for the other).
 */
export async function measureMcpOverhead(bounds: InterleavedOptions): Promise<McpOverhead> {
  const store = new ToolStore({ name: "benchMcp" });
  const [client, source] = await Promise.all([connectDirect(), startEchoSource(store)]);
  try {
    if (!store.tools.has(ECHO_TOOL)) throw new Error(`the MCP tool source has no ${ECHO_TOOL}`);
    const samples = await sampleInterleaved(
      { direct: directStep(client), lifecycle: lifecycleStep(store) },
      bounds,
    );
    return {
      direct: summarize(samples.direct ?? []),
      lifecycle: summarize(samples.lifecycle ?? []),
    };
  } finally {
    await Promise.all([client.close(), source.close()]);
  }
}
