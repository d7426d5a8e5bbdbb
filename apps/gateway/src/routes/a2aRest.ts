import type { ServerResponse } from "node:http";
import { z } from "zod";
import type { GatewayError } from "../http/gatewayError.js";
import {
  defineRoute,
  type GatewayServices,
  json,
  type Route,
  type RouteReply,
} from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import {
  type A2aCall,
  type A2aFailure,
  failureOfA2aCall,
  failureOfRefusal,
  performA2aCall,
  V1_WORDING,
} from "./a2aCall.js";
import { PUSH_METHODS, performPushCall } from "./a2aPush.js";
import { A2A_ERRORS } from "./a2aRun.js";

/** The domain and type of the `google.rpc.ErrorInfo` of an A2A error (A2A v1.0 §11.6). */
const ERROR_INFO = { type: "type.googleapis.com/google.rpc.ErrorInfo", domain: "a2a-protocol.org" };

/** How the HTTP+JSON binding says each A2A error: its HTTP status, gRPC status name, reason. */
const REST_ERRORS: Record<number, { http: number; status: string; reason?: string }> = {
  [A2A_ERRORS.taskNotFound]: { http: 404, status: "NOT_FOUND", reason: "TASK_NOT_FOUND" },
  [A2A_ERRORS.taskNotCancelable]: {
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "TASK_NOT_CANCELABLE",
  },
  [A2A_ERRORS.pushNotSupported]: {
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
  },
  [A2A_ERRORS.unsupportedOperation]: {
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "UNSUPPORTED_OPERATION",
  },
  [A2A_ERRORS.invalidParams]: { http: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS" },
  [A2A_ERRORS.methodNotFound]: { http: 501, status: "UNIMPLEMENTED" },
};

/** The gRPC status name of an HTTP status of the gateway's own refusals. */
function statusNameOf(http: number): string {
  if (http === 400 || http === 413) return "INVALID_ARGUMENT";
  if (http === 401) return "UNAUTHENTICATED";
  if (http === 403) return "PERMISSION_DENIED";
  if (http === 404) return "NOT_FOUND";
  if (http === 409) return "FAILED_PRECONDITION";
  if (http === 429) return "RESOURCE_EXHAUSTED";
  if (http === 503) return "UNAVAILABLE";
  return "INTERNAL";
}

/**
 * An A2A error as the HTTP+JSON binding answers it: its HTTP status and a `google.rpc.Status`
 * body (`{ error: { code, status, message, details } }`) whose `ErrorInfo` names A2A's reason
 * (`TASK_NOT_FOUND`…), so a client throws its own error class; a gateway refusal keeps its
 * HTTP status (a 404 is `TASK_NOT_FOUND`), its code in the `ErrorInfo`'s metadata.
 */
export function restFailureOf(failure: A2aFailure): { http: number; body: unknown } {
  const known = REST_ERRORS[failure.code];
  const http = failure.status ?? known?.http ?? 500;
  const reason = http === 404 ? "TASK_NOT_FOUND" : known?.reason;
  const metadata = Object.fromEntries(
    Object.entries(failure.data ?? {}).map(([name, value]) => [name, String(value)]),
  );
  const info = { "@type": ERROR_INFO.type, domain: ERROR_INFO.domain, metadata };
  const details = reason ? [{ ...info, reason }] : [];
  const status = failure.status !== undefined ? statusNameOf(http) : (known?.status ?? "INTERNAL");
  return { http, body: { error: { code: http, status, message: failure.message, details } } };
}

/** The body of a refusal before the handler runs (key, scope, body), in the binding's shape. */
function restRefusal(err: GatewayError): unknown {
  return restFailureOf(failureOfRefusal(err)).body;
}

/**
 * Performs `call` for an HTTP+JSON route (a push config call through `performPushCall`): its
 * result as JSON, its stream, or its error.
 */
export async function answerRestCall(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  call: A2aCall,
  agent: string | undefined,
): Promise<RouteReply> {
  try {
    if (PUSH_METHODS.has(call.method)) {
      return json(200, await performPushCall(services, key, call.method, call.params));
    }
    const binding = { say: V1_WORDING, frame: (result: unknown) => result };
    const outcome = await performA2aCall(services, key, res, call, agent, binding);
    return outcome.kind === "streamed" ? outcome : json(200, outcome.value);
  } catch (err) {
    if (res.headersSent) throw err;
    const failure = restFailureOf(failureOfA2aCall(services, err));
    return json(failure.http, failure.body);
  }
}

const messageBody = z.looseObject({ message: z.looseObject({}) });
const noBody = z.looseObject({}).optional();
const pushBody = z.looseObject({ url: z.string().max(2048) });
const taskQuery = z.looseObject({ historyLength: z.string().max(20).optional() });

/** One HTTP+JSON endpoint: where, the A2A method, and how its call is read from the request. */
interface RestEndpoint {
  method: "GET" | "POST" | "DELETE";
  path: string;
  a2a: string;
  summary: string;
  stream?: boolean;
  /** A push config call: its params are the body with the task (and config) from the path. */
  push?: boolean;
}

/** The endpoints of the HTTP+JSON binding under a base (A2A v1.0 §11, as the SDK's client calls them). */
const ENDPOINTS: RestEndpoint[] = [
  {
    method: "POST",
    path: "/message:send",
    a2a: "SendMessage",
    summary: "SendMessage: the task once its run ends or waits for input",
  },
  {
    method: "POST",
    path: "/message:stream",
    a2a: "SendStreamingMessage",
    summary: "SendStreamingMessage: the task, then its changes (server-sent events)",
    stream: true,
  },
  {
    method: "POST",
    path: "/tasks/{id}:subscribe",
    a2a: "SubscribeToTask",
    summary: "SubscribeToTask: the task as it stands, then its changes, from any gateway",
    stream: true,
  },
  {
    method: "GET",
    path: "/tasks/{id}:subscribe",
    a2a: "SubscribeToTask",
    summary: "SubscribeToTask (GET)",
    stream: true,
  },
  {
    method: "POST",
    path: "/tasks/{id}:cancel",
    a2a: "CancelTask",
    summary: "CancelTask: the durable abort of the task's run",
  },
  {
    method: "GET",
    path: "/tasks/{id}",
    a2a: "GetTask",
    summary: "GetTask: the task rebuilt from its run's stored events",
  },
  {
    method: "POST",
    path: "/tasks/{id}/pushNotificationConfigs",
    a2a: "CreateTaskPushNotificationConfig",
    summary:
      "CreateTaskPushNotificationConfig: a webhook (on a host YIEM_A2A_PUSH_HOSTS allows) told of the task's states",
    push: true,
  },
  {
    method: "GET",
    path: "/tasks/{id}/pushNotificationConfigs",
    a2a: "ListTaskPushNotificationConfigs",
    summary: "ListTaskPushNotificationConfigs: the task's push configs",
    push: true,
  },
  {
    method: "GET",
    path: "/tasks/{id}/pushNotificationConfigs/{configId}",
    a2a: "GetTaskPushNotificationConfig",
    summary: "GetTaskPushNotificationConfig: one push config of the task",
    push: true,
  },
  {
    method: "DELETE",
    path: "/tasks/{id}/pushNotificationConfigs/{configId}",
    a2a: "DeleteTaskPushNotificationConfig",
    summary: "DeleteTaskPushNotificationConfig: no more notifications to that webhook",
    push: true,
  },
];

/** The A2A params of a call of `endpoint`: the body, the ids in the path. */
function paramsOfRequest(endpoint: RestEndpoint, sent: unknown, path: Record<string, string>) {
  if (endpoint.a2a.endsWith("Message")) return sent;
  if (!endpoint.push) return { id: path.id };
  const config = path.configId === undefined ? {} : { id: path.configId };
  return { ...((sent as object | undefined) ?? {}), taskId: path.id, ...config };
}

/** The route of `endpoint` under `base` (`/v1/a2a/rest`, `/v1/a2a/{agent}/rest`). */
function restRoute(base: string, endpoint: RestEndpoint): Route {
  const body = endpoint.a2a.endsWith("Message") ? messageBody : endpoint.push ? pushBody : noBody;
  return defineRoute({
    method: endpoint.method,
    path: `${base}${endpoint.path}`,
    summary: `The A2A face's HTTP+JSON binding (A2A v1.0): ${endpoint.summary}. The same tasks, keys, scopes and ownership as the JSON-RPC binding; errors are google.rpc.Status bodies naming A2A's reason.`,
    scope: "read",
    ...(endpoint.method === "POST" ? { body } : { query: taskQuery }),
    ...(endpoint.push ? {} : { holds: () => "long" as const }),
    errorBody: restRefusal,
    responses: {
      200: endpoint.stream
        ? { description: "the task's stream events", mediaType: "text/event-stream" }
        : { description: "the A2A result (proto JSON)" },
      400: { description: "an A2A error (google.rpc.Status)" },
      404: { description: "TASK_NOT_FOUND: no such task for this key" },
    },
    async handle({ res, key, body: sent, params, services }): Promise<RouteReply> {
      const call = { method: endpoint.a2a, params: paramsOfRequest(endpoint, sent, params) };
      return answerRestCall(services, key, res, call, params.agent);
    },
  }) as Route;
}

/**
 * The routes of the A2A face's HTTP+JSON binding, for the default agent (`/v1/a2a/rest/…`)
 * and for one agent (`/v1/a2a/{agent}/rest/…`): `message:send`, `message:stream`,
 * `tasks/{id}`, `tasks/{id}:cancel`, `tasks/{id}:subscribe`, and the push notification
 * configs (`tasks/{id}/pushNotificationConfigs[/{configId}]`), each a call of the JSON-RPC
 * binding's methods (`performA2aCall`, `performPushCall`).
 */
export function a2aRestRoutes(): Route[] {
  return ["/v1/a2a/rest", "/v1/a2a/{agent}/rest"].flatMap((base) =>
    ENDPOINTS.map((endpoint) => restRoute(base, endpoint)),
  );
}
