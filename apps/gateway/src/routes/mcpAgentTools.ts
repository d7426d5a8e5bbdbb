import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { sessionIdSchema } from "../schemas.js";
import { listUsableAgents, type UsableAgent } from "./agents.js";
import { callAgentTool, type McpCallExtra, type McpRequestContext } from "./mcpAgentCall.js";
import { createRunTask, runTaskStore } from "./mcpTasks.js";

/** The arguments of every agent's tool. */
export const agentToolInput = {
  message: z.string().min(1).describe("What to ask the agent: the run's input"),
  sessionId: sessionIdSchema
    .optional()
    .describe(
      "Continue this session (one of this key's, from an earlier result's sessionId); absent: a new session",
    ),
};

const usageShape = z.looseObject({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  modelCalls: z.number(),
  toolCalls: z.number(),
});

/** The `structuredContent` of every agent tool's result (an `isError` result may lack it). */
export const agentToolOutput = {
  status: z
    .enum(["completed", "failed", "aborted", "stopped", "awaiting_approval"])
    .describe("How the run stands: stopped is a budget stop; awaiting_approval waits for a person"),
  agent: z.string().describe("The agent that answered (after a handoff, the one handed to)"),
  runId: z.string(),
  sessionId: z.string().describe("Pass it back as sessionId to continue the conversation"),
  stopReason: z.string().optional(),
  usage: usageShape.optional().describe("What the run used (its child runs included)"),
  output: z.unknown().optional().describe("The run's structured output, for an agent with one"),
  approvals: z
    .array(
      z.object({
        sessionId: z.string(),
        toolCallId: z.string(),
        toolName: z.string(),
        reason: z.string().optional(),
      }),
    )
    .optional()
    .describe("The calls awaiting a decision (POST /v1/approvals), with awaiting_approval"),
};

const agentToolArgs = z.object(agentToolInput);

/**
 * A new MCP server for one request, offering one tool per agent `context.key` may use among
 * those the running coordinators announce (`listUsableAgents`): named as the agent, described
 * by its description, taking `{ message, sessionId? }`, a task optionally (MCP's tasks
 * extension, `mcpTasks.ts`: a task-augmented call answers at once with the run's task, which
 * `tasks/list`, `tasks/get`, `tasks/result` and `tasks/cancel` follow on any gateway). A key that may use
 * none gets an empty list. Made per request, as the face keeps nothing between requests.
 */
export async function createAgentServer(
  context: McpRequestContext,
  version: string,
): Promise<McpServer> {
  const capabilities = {
    tools: { listChanged: false },
    tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  };
  const taskStore = runTaskStore(context.services, context.key);
  const server = new McpServer(
    { name: "yiem-gateway", title: "Yiem agents", version },
    { capabilities, taskStore },
  );
  const agents = await listUsableAgents(context.services, context.key);
  if (agents.length === 0) {
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  }
  for (const agent of agents) registerAgentTool(server, context, agent);
  const names = new Set(agents.map((agent) => agent.name));
  // The SDK's own tools/call handler takes tasks only from tools registered as task handlers,
  // and then polls its own store for plain calls; this one starts a task or calls as before.
  server.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(context, names, request.params, extra),
  );
  return server;
}

/** A `tools/call`: a task when the request asks for one, else the call answered when done. */
async function callTool(
  context: McpRequestContext,
  names: Set<string>,
  params: { name: string; arguments?: Record<string, unknown>; task?: unknown },
  extra: McpCallExtra,
): Promise<CallToolResult | CreateTaskResult> {
  const refuse = (message: string): CallToolResult => {
    if (params.task !== undefined) throw new McpError(ErrorCode.InvalidParams, message);
    return { content: [{ type: "text", text: message }], isError: true };
  };
  if (!names.has(params.name)) return refuse(`Tool ${params.name} not found`);
  const parsed = agentToolArgs.safeParse(params.arguments ?? {});
  if (!parsed.success) {
    return refuse(`Invalid arguments for tool ${params.name}: ${parsed.error.message}`);
  }
  if (params.task !== undefined) {
    return createRunTask(context.services, context.key, params.name, parsed.data);
  }
  return callAgentTool(context, params.name, parsed.data, extra);
}

function registerAgentTool(server: McpServer, context: McpRequestContext, agent: UsableAgent) {
  const tool = server.registerTool(
    agent.name,
    {
      title: `Agent ${agent.name}`,
      description:
        agent.description ?? `Asks the Yiem agent "${agent.name}" (model ${agent.model})`,
      inputSchema: agentToolInput,
      outputSchema: agentToolOutput,
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    (args, extra) => callAgentTool(context, agent.name, args, extra),
  );
  // Listed as taking a task optionally; `callTool` answers the calls.
  tool.execution = { taskSupport: "optional" };
}
