import type { ServerResponse } from "node:http";
import { z } from "zod";
import { toGatewayError } from "../http/dispatch.js";
import type { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { sessionIdSchema } from "../schemas.js";
import { legacyStreamEvent, legacyTask } from "./a2aLegacy.js";
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
import { type RunEvents, streamSignal } from "./followRun.js";

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

/** One A2A call (a v1.0 method name), whichever binding carried it: JSON-RPC or HTTP+JSON. */
export interface A2aCall {
  method: string;
  params: unknown;
}

/** What an A2A call answered: its result, or a stream it wrote to the response. */
export type A2aOutcome = { kind: "result"; value: unknown } | { kind: "streamed" };

/** How a call's results are said: in A2A v1.0's shapes, or v0.3's for its method names. */
export interface A2aWording {
  task(task: A2aTaskObject): unknown;
  sent(task: A2aTaskObject): unknown;
  event(event: A2aStreamEvent): unknown;
}

/** A2A v1.0's shapes. */
export const V1_WORDING: A2aWording = {
  task: (task) => task,
  sent: (task) => ({ task }),
  event: (event) => event,
};

/** A2A v0.3's shapes (`kind`, `input-required`, `final`). */
export const V03_WORDING: A2aWording = {
  task: legacyTask,
  sent: legacyTask,
  event: legacyStreamEvent,
};

/** How a binding says a call's answer: its wording, and the JSON of one stream event. */
export interface A2aBinding {
  say: A2aWording;
  /** The JSON of the server-sent event carrying `result` (an event as `say` words it). */
  frame(result: unknown): unknown;
}

/** A2A's error for a gateway refusal of `status`, as a JSON-RPC code. */
function codeOfStatus(status: number): number {
  if (status === 404) return A2A_ERRORS.taskNotFound;
  if (status === 400 || status === 413) return A2A_ERRORS.invalidParams;
  if (status === 401 || status === 403) return A2A_ERRORS.invalidRequest;
  if (status === 409) return A2A_ERRORS.unsupportedOperation;
  return A2A_ERRORS.internal;
}

/** An A2A error as both bindings say it: A2A's (JSON-RPC) code, a message, and its data. */
export interface A2aFailure {
  code: number;
  message: string;
  data?: Record<string, unknown>;
  /** The gateway's HTTP status, for a gateway refusal. */
  status?: number;
}

/** A gateway refusal as an A2A error (its HTTP status and code in `data`). */
export function failureOfRefusal(refusal: GatewayError): A2aFailure {
  const data = {
    status: refusal.status,
    code: refusal.code,
    ...(refusal.field ? { field: refusal.field } : {}),
  };
  const code = codeOfStatus(refusal.status);
  return { code, message: refusal.message, data, status: refusal.status };
}

/** A failed call's error: A2A's own, or the gateway's refusal (`failureOfRefusal`). */
export function failureOfA2aCall(services: GatewayServices, err: unknown): A2aFailure {
  if (err instanceof A2aRpcError) {
    const status = typeof err.data?.status === "number" ? { status: err.data.status } : {};
    return {
      code: err.code,
      message: err.message,
      ...(err.data ? { data: err.data } : {}),
      ...status,
    };
  }
  return failureOfRefusal(toGatewayError(err, services));
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
 * The task a message is about, and where to follow it from: a new task (a run started, its
 * `events` followed since before it was queued: close them unread), or the task it continues
 * (its calls decided), read as it stands.
 */
async function taskOfMessage(
  services: GatewayServices,
  key: GatewayKey,
  message: SentMessage,
  agent: string | undefined,
): Promise<{ run: TaskRun; task: A2aTask; events?: RunEvents }> {
  if (message.taskId === undefined) {
    const { run, events } = await startTask(services, key, message, agent);
    return { run, task: new A2aTask(run.runId, run.sessionId), events };
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
  const { run, task, events } = await taskOfMessage(services, key, params.message, agent);
  const now = params.configuration?.returnImmediately || params.configuration?.blocking === false;
  const { signal, release } = streamSignal(services, res, key);
  try {
    if (now || task.ended || task.state === "TASK_STATE_INPUT_REQUIRED") return task.snapshot();
    await followTask(services, run, task, signal, () => undefined, events);
    return task.snapshot();
  } finally {
    events?.close();
    release();
  }
}

/**
 * Performs one A2A call of `key` (`agent` from the URL, if any), as either binding carries
 * it: its result, or its stream written to `res` (each event framed by `binding.frame`).
 * Throws `A2aRpcError` (or a gateway refusal) for a call that fails; push notification
 * configs are the caller's (`a2aPush.ts`), so they are `MethodNotFound` here.
 */
export async function performA2aCall(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  call: A2aCall,
  agent: string | undefined,
  binding: A2aBinding,
): Promise<A2aOutcome> {
  const { say } = binding;
  const result = (value: unknown): A2aOutcome => ({ kind: "result", value });
  const taskId = () => paramsOf(taskParamsSchema, call.params).id;
  const frame = (event: A2aStreamEvent) => binding.frame(say.event(event));
  switch (call.method) {
    case "SendMessage": {
      const params = paramsOf(sendParamsSchema, call.params);
      return result(say.sent(await sendMessage(services, key, res, params, agent)));
    }
    case "SendStreamingMessage": {
      const params = paramsOf(sendParamsSchema, call.params);
      const { run, task, events } = await taskOfMessage(services, key, params.message, agent);
      try {
        await streamTask(services, key, res, { run, task, frame, events });
      } finally {
        events?.close();
      }
      return { kind: "streamed" };
    }
    case "GetTask": {
      const run = await expectVisibleTask(services, key, taskId());
      return result(say.task((await readTask(services, run)).task.snapshot()));
    }
    case "CancelTask": {
      const run = await expectVisibleTask(services, key, taskId());
      expectScope(key, "submit");
      return result(say.task(await cancelTask(services, run)));
    }
    case "SubscribeToTask": {
      const run = await expectVisibleTask(services, key, taskId());
      const { task, seq } = await readTask(services, run);
      await streamTask(services, key, res, { run: { ...run, afterSeq: seq }, task, frame });
      return { kind: "streamed" };
    }
    default:
      throw new A2aRpcError(A2A_ERRORS.methodNotFound, `method ${call.method} is not supported`);
  }
}
