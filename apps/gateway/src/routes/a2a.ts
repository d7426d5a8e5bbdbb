import type { ServerResponse } from "node:http";
import { z } from "zod";
import { a2aRequestSchema } from "../faceSchemas.js";
import { toGatewayError } from "../http/dispatch.js";
import type { GatewayError } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json, type RouteReply } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { sessionIdSchema } from "../schemas.js";
import { agentCardRoute, defaultAgentCardRoute } from "./a2aCard.js";
import { LEGACY_METHODS, legacyStreamEvent, legacyTask } from "./a2aLegacy.js";
import {
  A2A_ERRORS,
  A2aRpcError,
  cancelTask,
  continueTask,
  expectScope,
  expectVisibleTask,
  followTask,
  readTask,
  type SentMessage,
  startTask,
  streamTask,
  type TaskRun,
} from "./a2aRun.js";
import { type A2aStreamEvent, A2aTask, type A2aTaskObject } from "./a2aTask.js";
import { streamSignal } from "./followRun.js";

type RpcId = string | number | null;

/** The params of `SendMessage` and `SendStreamingMessage`, as the face reads them. */
const sendParamsSchema = z.looseObject({
  message: z.looseObject({
    messageId: z.string().min(1).max(200),
    contextId: sessionIdSchema.optional(),
    taskId: z.string().min(1).max(200).optional(),
    parts: z.array(z.looseObject({})).max(1000),
  }),
  configuration: z
    .looseObject({ returnImmediately: z.boolean().optional(), blocking: z.boolean().optional() })
    .optional(),
});

/** The params of `GetTask`, `CancelTask` and `SubscribeToTask`. */
const taskParamsSchema = z.looseObject({ id: z.string().min(1).max(200) });

/** A2A's error code for a gateway refusal of `status`. */
function codeOfStatus(status: number): number {
  if (status === 404) return A2A_ERRORS.taskNotFound;
  if (status === 400 || status === 413) return A2A_ERRORS.invalidParams;
  if (status === 401 || status === 403) return A2A_ERRORS.invalidRequest;
  if (status === 409) return A2A_ERRORS.unsupportedOperation;
  return A2A_ERRORS.internal;
}

/** A gateway refusal as a JSON-RPC error response (its HTTP status and code in `data`). */
function rpcErrorOf(id: RpcId, err: GatewayError) {
  const data = { status: err.status, code: err.code, ...(err.field ? { field: err.field } : {}) };
  const error = { code: codeOfStatus(err.status), message: err.message, data };
  return { jsonrpc: "2.0", id, error };
}

/** The JSON-RPC answer of a failed call: A2A's error, or the gateway's refusal in its terms. */
function failureOf(services: GatewayServices, id: RpcId, err: unknown) {
  if (err instanceof A2aRpcError) {
    const data = err.data ? { data: err.data } : {};
    return { jsonrpc: "2.0", id, error: { code: err.code, message: err.message, ...data } };
  }
  return rpcErrorOf(id, toGatewayError(err, services));
}

/** `params` checked against `schema`: `InvalidParams` naming the first fault. */
function paramsOf<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  throw new A2aRpcError(A2A_ERRORS.invalidParams, `params: ${where}${issue?.message ?? "invalid"}`);
}

/**
 * The task a message is about, and where to follow it from: a new task (a run started), or
 * the task it continues (its calls decided), read as it stands.
 */
async function taskOfMessage(
  services: GatewayServices,
  key: GatewayKey,
  message: SentMessage,
  agent: string | undefined,
): Promise<{ run: TaskRun; task: A2aTask }> {
  if (message.taskId === undefined) {
    const run = await startTask(services, key, message, agent);
    return { run, task: new A2aTask(run.runId, run.sessionId) };
  }
  const run = await continueTask(services, key, { ...message, taskId: message.taskId });
  const { task, seq } = await readTask(services, run);
  return { run: { ...run, afterSeq: seq }, task };
}

/**
 * `SendMessage`: the task once its run ends or waits for input (a client gone or a gateway
 * shutting down ends the wait with the task as it stands; the run goes on); at once with
 * `configuration.returnImmediately`.
 */
async function sendMessage(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  params: z.infer<typeof sendParamsSchema>,
  agent: string | undefined,
) {
  const { run, task } = await taskOfMessage(services, key, params.message, agent);
  const now = params.configuration?.returnImmediately || params.configuration?.blocking === false;
  if (now || task.ended || task.state === "TASK_STATE_INPUT_REQUIRED") return task.snapshot();
  const { signal, release } = streamSignal(services, res, key);
  try {
    await followTask(services, run, task, signal, () => undefined);
  } finally {
    release();
  }
  return task.snapshot();
}

/** How a request's results are said: in A2A v1.0's shapes, or v0.3's for its method names. */
interface Wording {
  task(task: A2aTaskObject): unknown;
  sent(task: A2aTaskObject): unknown;
  event(event: A2aStreamEvent): unknown;
}

const V1: Wording = { task: (task) => task, sent: (task) => ({ task }), event: (event) => event };
const V03: Wording = { task: legacyTask, sent: legacyTask, event: legacyStreamEvent };

/**
 * Answers one A2A JSON-RPC request (`agent` from the URL, if any); streams are written to
 * `res`. The v0.3 method names (`message/send`…) are answered in v0.3's shapes.
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
  const say = legacy ? V03 : V1;
  const method = legacy ? (LEGACY_METHODS[body.method] as string) : body.method;
  const ok = (result: unknown) => json(200, { jsonrpc: "2.0", id, result });
  const taskId = () => paramsOf(taskParamsSchema, body.params).id;
  switch (method) {
    case "SendMessage": {
      const params = paramsOf(sendParamsSchema, body.params);
      return ok(say.sent(await sendMessage(services, key, res, params, agent)));
    }
    case "SendStreamingMessage": {
      const params = paramsOf(sendParamsSchema, body.params);
      const { run, task } = await taskOfMessage(services, key, params.message, agent);
      await streamTask(services, key, res, { id, run, task, format: say.event });
      return { kind: "streamed" };
    }
    case "GetTask": {
      const run = await expectVisibleTask(services, key, taskId());
      return ok(say.task((await readTask(services, run)).task.snapshot()));
    }
    case "CancelTask": {
      const run = await expectVisibleTask(services, key, taskId());
      expectScope(key, "submit");
      return ok(say.task(await cancelTask(services, run)));
    }
    case "SubscribeToTask": {
      const run = await expectVisibleTask(services, key, taskId());
      const { task, seq } = await readTask(services, run);
      const resumed = { ...run, afterSeq: seq };
      await streamTask(services, key, res, { id, run: resumed, task, format: say.event });
      return { kind: "streamed" };
    }
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
    case "ListTaskPushNotificationConfigs":
    case "DeleteTaskPushNotificationConfig":
      throw new A2aRpcError(A2A_ERRORS.pushNotSupported, "push notifications are not supported");
    default:
      throw new A2aRpcError(A2A_ERRORS.methodNotFound, `method ${body.method} is not supported`);
  }
}

/** The error body of the face's refusals before its handler runs (key, scope, body). */
function rpcRefusal(err: GatewayError) {
  return rpcErrorOf(null, err);
}

const summary =
  "The A2A face (Agent2Agent v1.0, JSON-RPC binding; @a2a-js/sdk's client): SendMessage, SendStreamingMessage (server-sent events), GetTask, CancelTask (the durable abort of the task's run), SubscribeToTask (the task as it stands, then its changes: from any gateway). A task is a run (its id the run's id), its contextId the session (a new one when the message names none). Each model call's text is an artifact; tool calls and results are working statuses with data parts; a run waiting for approval is TASK_STATE_INPUT_REQUIRED, and a message on that task (taskId) with a data part { approved, callId?, reason? } or the text approve / deny decides its calls (approve scope) and continues it. Another key's task is TaskNotFoundError. Closing a stream leaves the run going. Push notifications are not supported. The v0.3 method names (message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe) are answered in v0.3's shapes.";

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

/** The routes of the A2A face: the agent cards and the JSON-RPC endpoints. */
export function a2aRoutes(version: string) {
  return [
    defaultAgentCardRoute(version),
    agentCardRoute(version),
    a2aRpcRoute("/v1/a2a"),
    a2aRpcRoute("/v1/a2a/{agent}"),
  ];
}
