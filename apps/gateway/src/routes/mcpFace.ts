import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { defineRoute, type RouteReply } from "../http/route.js";
import { errorSchema } from "../schemas.js";
import { createAgentServer } from "./mcpAgentTools.js";
import { cancelNotifiedCalls } from "./mcpCallCancel.js";

/** The header that names an MCP client on the gateway (the id it was given on `initialize`). */
const CLIENT_HEADER = "mcp-session-id";

/** What a client id may be (an id another server gave it is used as it is, if it fits). */
const CLIENT_ID = /^[\x21-\x7e]{1,128}$/;

const jsonRpcMessage = z.looseObject({ jsonrpc: z.literal("2.0") });

/** The body of `POST /mcp`: one JSON-RPC message, or a batch. */
export const mcpBodySchema = z.union([jsonRpcMessage, z.array(jsonRpcMessage).min(1)]);

/**
 * `POST /mcp`: the MCP server face (Streamable HTTP, stateless). Each request gets a new MCP
 * server and transport (`sessionIdGenerator: undefined`): nothing of an MCP session stays in
 * the gateway, so any gateway process answers any request. `tools/list` offers one tool per
 * agent the key may use; `tools/call` runs it (`mcpAgentCall.ts`). `initialize` names the
 * client with an `Mcp-Session-Id` that no gateway keeps or checks: it only tells two clients
 * of one key apart when a `notifications/cancelled` names a request id. GET (the server's own
 * event stream) and DELETE answer 405, as a stateless server does. A task-augmented
 * `tools/call` is a task (`mcpTasks.ts`), derived from its run on every request.
 */
export function mcpRoute(version: string) {
  return defineRoute({
    method: "POST",
    path: "/mcp",
    summary:
      "The MCP server face (Streamable HTTP, stateless): tools/list offers one tool per agent this key may use ({ message, sessionId? }); tools/call runs the agent with this key's identity and answers with its text and structuredContent { status, agent, runId, sessionId, usage }, sending notifications/progress from its tool calls when given a progressToken. A run waiting for approval is answered with the calls awaiting a decision (status awaiting_approval); notifications/cancelled aborts the call's run durably; a client that disconnects leaves it running. A tools/call with a task (MCP's tasks extension) answers at once with the run's task (its id the run id), which tasks/get, tasks/result and tasks/cancel (the durable abort) follow on any gateway; tasks/list pages the key's own tasks.",
    scope: "submit",
    body: mcpBodySchema,
    responses: {
      200: {
        description: "the JSON-RPC answers, as server-sent events",
        mediaType: "text/event-stream",
      },
      202: { description: "notifications only: accepted" },
      403: { description: "the key lacks the submit scope", schema: errorSchema },
    },
    async handle({ req, res, key, body, services }): Promise<RouteReply> {
      const clientId = identifyClient(req, res, body);
      await cancelNotifiedCalls(services, key, clientId, body);
      let server: Awaited<ReturnType<typeof createAgentServer>> | undefined;
      const drop = async () => {
        await server?.close();
      };
      const context = { services, key, res, clientId, drop };
      server = await createAgentServer(context, version);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        keepAliveMs: services.heartbeatMs,
      });
      res.once("close", () => void drop().catch(() => undefined));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return { kind: "streamed" };
    },
  });
}

/**
 * The id of the request's MCP client: a new one, sent as `Mcp-Session-Id`, on `initialize`
 * (the client sends it back with each request); the one it sends otherwise; `-` for none.
 */
function identifyClient(req: IncomingMessage, res: ServerResponse, body: unknown): string {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.some((m) => (m as { method?: unknown }).method === "initialize")) {
    const id = randomUUID();
    res.setHeader("Mcp-Session-Id", id);
    return id;
  }
  const sent = req.headers[CLIENT_HEADER];
  const text = Array.isArray(sent) ? sent[0] : sent;
  return text !== undefined && CLIENT_ID.test(text) ? text : "-";
}
