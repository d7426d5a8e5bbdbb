import type { Logger } from "../ops/logger.js";
import { describeError } from "../tools/toolResults.js";
import type { AgentTool, AgentToolResult, JsonSchema, ToolArgs } from "../types/tools.js";
import type { McpServerConfig, McpToolOptions } from "./mcpConfig.js";
import { describeMcpResultText, toAgentToolResult } from "./mcpContent.js";
import { McpServerDownError, McpServerLostError } from "./mcpErrors.js";
import type { McpServerConnection, McpTool } from "./mcpServerConnection.js";

/** How long a call that may be retried waits for its server to come back. */
export const MCP_RETRY_WAIT_MS = 30_000;

/**
 * The Yiem name of MCP tool `tool` of a server: `<toolPrefix>__<tool>` (the bare name with an
 * empty prefix), any character the OpenAI API refuses in a function name replaced by `_`.
 *
 * @example mcpToolName("git", "log.show") // "git__log_show"
 */
export function mcpToolName(toolPrefix: string, tool: string): string {
  const safe = tool.replace(/[^a-zA-Z0-9_-]/g, "_");
  return toolPrefix === "" ? safe : `${toolPrefix}__${safe}`;
}

/** The options of tool `tool` of a server: the server's, then the tool's own entry on top. */
export function mcpToolOptions(config: McpServerConfig, tool: string): McpToolOptions {
  const keys = [
    "timeoutMs",
    "retries",
    "queue",
    "concurrency",
    "rateLimit",
    "approval",
    "approvalTimeoutMs",
    "idempotent",
  ] as const;
  const merged: McpToolOptions = {};
  for (const key of keys) {
    const value = config.tools[tool]?.[key] ?? config[key];
    if (value !== undefined) Object.assign(merged, { [key]: value });
  }
  return merged;
}

/** Whether the config lets tool `tool` of the server through `allowTools` / `denyTools`. */
export function isMcpToolAllowed(config: McpServerConfig, tool: string): boolean {
  if (config.denyTools.includes(tool)) return false;
  return config.allowTools === undefined || config.allowTools.includes(tool);
}

/** The server's input schema, without `$schema` (ajv, the model APIs and other drafts disagree on it). */
function inputSchemaOf(tool: McpTool): JsonSchema {
  const { $schema: _drop, ...schema } = tool.inputSchema as JsonSchema;
  return schema;
}

interface CallContext {
  connection: McpServerConnection;
  tool: McpTool;
  name: string;
  retries: number;
  log: Logger;
}

async function callOnce(
  ctx: CallContext,
  args: ToolArgs,
  signal: AbortSignal | undefined,
  onPartialResult: (partial: unknown) => void,
): Promise<AgentToolResult> {
  const server = ctx.connection.config.name;
  const result = await ctx.connection.callTool(ctx.tool.name, args, {
    signal,
    onProgress: (progress) => onPartialResult(progress),
  });
  if (result.isError) {
    throw new Error(
      describeMcpResultText(result) || `${ctx.name}: the MCP server reported an error`,
    );
  }
  return toAgentToolResult(result, { server, tool: ctx.tool.name });
}

function isServerGone(err: unknown): boolean {
  return err instanceof McpServerLostError || err instanceof McpServerDownError;
}

/** What a call whose server went away says, naming the server and the tool. */
function describeServerGone(ctx: CallContext, err: Error, attempts: number): string {
  const tries = attempts > 1 ? ` (${attempts} attempts; retries: ${ctx.retries})` : "";
  const what = err instanceof McpServerLostError ? "while running" : "before running";
  return `${ctx.name}: ${err.message} ${what} tool "${ctx.tool.name}"; the call has no result${tries}`;
}

/** Runs a call, again after its server came back while the tool's `retries` allow. */
async function callWithRetries(
  ctx: CallContext,
  args: ToolArgs,
  signal: AbortSignal | undefined,
  onPartialResult: (partial: unknown) => void,
): Promise<AgentToolResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await callOnce(ctx, args, signal, onPartialResult);
    } catch (err) {
      if (signal?.aborted || !isServerGone(err)) throw err;
      if (attempt > ctx.retries) throw new Error(describeServerGone(ctx, err as Error, attempt));
      ctx.log.info(
        { mcpServer: ctx.connection.config.name, tool: ctx.name, attempt, err: describeError(err) },
        "mcp call lost with its server; retrying once it is back",
      );
      await ctx.connection.waitUntilUp(signal, MCP_RETRY_WAIT_MS).catch((waitErr: unknown) => {
        if (signal?.aborted) throw waitErr;
        throw new Error(describeServerGone(ctx, err as Error, attempt));
      });
    }
  }
}

/**
 * A Yiem tool that calls MCP tool `tool` on `connection`'s server: named by `mcpToolName`,
 * the server's JSON Schema as `inputSchema`, `parallelToolExecute: true`, the config's
 * options (`mcpToolOptions`). A call sends `tools/call` with the arguments; progress
 * notifications become partial results; an `isError` result throws (an error result); an
 * abort of the signal cancels the request on the server (`notifications/cancelled`); a server
 * that goes away mid-call makes an error naming server and tool, or a retry once it is back
 * while `retries` allow.
 */
export function toMcpAgentTool(
  connection: McpServerConnection,
  tool: McpTool,
  log: Logger,
): AgentTool {
  const { config } = connection;
  const options = mcpToolOptions(config, tool.name);
  const name = mcpToolName(config.toolPrefix, tool.name);
  const ctx: CallContext = { connection, tool, name, retries: options.retries ?? 0, log };
  return {
    ...options,
    name,
    label: tool.title ?? tool.annotations?.title ?? tool.name,
    description: tool.description ?? `${tool.name} (MCP server ${config.name})`,
    inputSchema: inputSchemaOf(tool),
    parallelToolExecute: true,
    execute: (_toolCallId, args, signal, onPartialResult) =>
      callWithRetries(ctx, args, signal, onPartialResult),
  };
}
