import type { ServerResponse } from "node:http";
import type { z } from "zod";
import { a2aRequestSchema } from "../faceSchemas.js";
import type { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json, type RouteReply } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import {
  type A2aBinding,
  failureOfA2aCall,
  failureOfRefusal,
  performA2aCall,
  V1_WORDING,
  V03_WORDING,
} from "./a2aCall.js";
import { agentCardRoute, defaultAgentCardRoute } from "./a2aCard.js";
import { LEGACY_METHODS } from "./a2aLegacy.js";
import { legacyPushParams, legacyPushResult, PUSH_METHODS, performPushCall } from "./a2aPush.js";
import { a2aRestRoutes } from "./a2aRest.js";

type RpcId = string | number | null;

/** A gateway refusal as a JSON-RPC error response (its HTTP status and code in `data`). */
function rpcErrorOf(id: RpcId, err: GatewayError) {
  const { code, message, data } = failureOfRefusal(err);
  return { jsonrpc: "2.0", id, error: { code, message, data } };
}

/** The JSON-RPC answer of a failed call: A2A's error, or the gateway's refusal in its terms. */
function failureOf(services: GatewayServices, id: RpcId, err: unknown) {
  const { code, message, data } = failureOfA2aCall(services, err);
  return { jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } };
}

/**
 * Answers one A2A JSON-RPC request (`agent` from the URL, if any); streams are written to
 * `res`, each event a JSON-RPC response of the request. The v0.3 method names
 * (`message/send`…) are answered in v0.3's shapes.
 */
async function answer(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  body: z.infer<typeof a2aRequestSchema>,
  agent: string | undefined,
): Promise<RouteReply> {
  const id: RpcId = body.id ?? null;
  const legacy = Object.hasOwn(LEGACY_METHODS, body.method);
  const method = legacy ? (LEGACY_METHODS[body.method] as string) : body.method;
  const binding: A2aBinding = {
    say: legacy ? V03_WORDING : V1_WORDING,
    frame: (result) => ({ jsonrpc: "2.0", id, result }),
  };
  if (PUSH_METHODS.has(method)) {
    const params = legacy ? legacyPushParams(method, body.params) : body.params;
    const result = await performPushCall(services, key, method, params);
    return json(200, {
      jsonrpc: "2.0",
      id,
      result: legacy ? legacyPushResult(method, result) : result,
    });
  }
  const call = { method, params: body.params };
  const outcome = await performA2aCall(services, key, res, call, agent, binding);
  if (outcome.kind === "streamed") return outcome;
  return json(200, { jsonrpc: "2.0", id, result: outcome.value });
}

/** The error body of the face's refusals before its handler runs (key, scope, body). */
function rpcRefusal(err: GatewayError) {
  return rpcErrorOf(null, err);
}

const summary =
  "The A2A face (Agent2Agent v1.0, JSON-RPC binding; @a2a-js/sdk's client): SendMessage, SendStreamingMessage (server-sent events), GetTask, CancelTask (the durable abort of the task's run), SubscribeToTask (the task as it stands, then its changes: from any gateway). A task is a run (its id the run's id), its contextId the session (a new one when the message names none). Each model call's text is an artifact; tool calls and results are working statuses with data parts; a run waiting for approval is TASK_STATE_INPUT_REQUIRED, and a message on that task (taskId) with a data part { approved, callId?, reason? } or the text approve / deny decides its calls (approve scope) and continues it. Another key's task is TaskNotFoundError. Closing a stream leaves the run going. Push notification configs (CreateTaskPushNotificationConfig, Get…, List…, Delete…; v0.3's tasks/pushNotificationConfig/set…) are kept in Redis with the task, their webhook hosts limited by YIEM_A2A_PUSH_HOSTS (none: refused). The same calls are offered over HTTP+JSON under /v1/a2a/rest (the card's second binding). The v0.3 method names (message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe) are answered in v0.3's shapes.";

/** The JSON-RPC route of the A2A face, at `path` (`agent` from the URL when it has one). */
function a2aRpcRoute(path: string) {
  return defineRoute({
    method: "POST",
    path,
    summary,
    scope: "read",
    body: a2aRequestSchema,
    holds: () => "long",
    errorBody: rpcRefusal,
    responses: {
      200: {
        description:
          "the JSON-RPC response; for the streaming methods, server-sent events each holding one",
      },
    },
    async handle({ res, key, body, params, services }): Promise<RouteReply> {
      try {
        return await answer(services, key, res, body, params.agent);
      } catch (err) {
        if (res.headersSent) throw err;
        const failure = failureOf(services, body.id ?? null, err);
        return json(200, failure);
      }
    },
  });
}

/** The routes of the A2A face: the agent cards, the HTTP+JSON and the JSON-RPC endpoints. */
export function a2aRoutes(version: string) {
  return [
    defaultAgentCardRoute(version),
    agentCardRoute(version),
    // The HTTP+JSON binding first: `/v1/a2a/rest/…` is no agent's JSON-RPC endpoint.
    ...a2aRestRoutes(),
    a2aRpcRoute("/v1/a2a"),
    a2aRpcRoute("/v1/a2a/{agent}"),
  ];
}
