import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { openEventStream } from "../http/eventStream.js";
import { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import { type GatewayKey, hasScope } from "../keys/gatewayKey.js";
import { type A2aStreamEvent, A2aTask, type A2aTaskObject } from "./a2aTask.js";
import { startFollowedRun } from "./followFirst.js";
import { followRun, type RunEvents, streamSignal } from "./followRun.js";
import { awaitedCalls, watchParkedRun } from "./parkedRun.js";
import type { PlannedRun } from "./runs.js";
import { isVisibleSession } from "./sessionAccess.js";
import { decideCall, locateWaitingCall } from "./waitingCalls.js";

/** A JSON-RPC error of the A2A face: its code (A2A v1.0's), message and data. */
export class A2aRpcError extends Error {
  override name = "A2aRpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A2A v1.0's JSON-RPC error codes the face answers with. */
export const A2A_ERRORS = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotSupported: -32003,
  unsupportedOperation: -32004,
} as const;

/** A task's run: its ids and the session's event it starts after. */
export interface TaskRun extends PlannedRun {
  afterSeq: number;
}

/** A part of an A2A message as a client sends it (loosely: text or data are read). */
interface SentPart {
  text?: unknown;
  data?: unknown;
}

/** The message of a `SendMessage` request, as the face reads it. */
export interface SentMessage {
  messageId: string;
  contextId?: string;
  taskId?: string;
  parts: SentPart[];
}

/** `TaskNotFoundError` for `taskId`: the same answer whether it exists or is another key's. */
export function taskNotFound(taskId: string): A2aRpcError {
  return new A2aRpcError(A2A_ERRORS.taskNotFound, `task ${taskId} not found`);
}

/** Throws A2A's error for a key without `scope`. */
export function expectScope(key: GatewayKey, scope: "submit" | "approve" | "read"): void {
  if (!hasScope(key, scope)) {
    throw new A2aRpcError(A2A_ERRORS.invalidRequest, `this key lacks the "${scope}" scope`, {
      status: 403,
      code: "forbidden",
    });
  }
}

/**
 * The run task `taskId` is (a task's id is its run's id), from the gateway's durable record
 * of it (any gateway reads it): `TaskNotFoundError` when no run has that id, or its session
 * is not one `key` may see.
 */
export async function expectVisibleTask(
  services: GatewayServices,
  key: GatewayKey,
  taskId: string,
): Promise<TaskRun> {
  const record = taskId === "" ? undefined : await services.store.readRun(taskId);
  if (!record || !(await isVisibleSession(services, key, record.sessionId))) {
    throw taskNotFound(taskId);
  }
  return { runId: taskId, sessionId: record.sessionId, afterSeq: record.afterSeq ?? 0 };
}

/** The text of a message's text parts, joined. */
function textOf(message: SentMessage): string {
  return message.parts.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}

/**
 * The session a message without a `contextId` starts: made from the key and the message's
 * id, so a retried message (the same `messageId`) finds the same task.
 */
function contextOf(key: GatewayKey, messageId: string): string {
  const digest = createHash("sha256").update(`${key.name}\n${messageId}`).digest("hex");
  return `a2a-${digest.slice(0, 32)}`;
}

/**
 * Starts the run a new message asks for (its text parts as the input) in its `contextId`'s
 * session (a new one when absent), with `agent` when the face was reached at an agent's URL.
 * The message id is the run's idempotency key: the same message again is the same task. Its
 * events are followed since before it was queued (`startFollowedRun`; close them unread).
 */
export async function startTask(
  services: GatewayServices,
  key: GatewayKey,
  message: SentMessage,
  agent: string | undefined,
): Promise<{ run: TaskRun; events: RunEvents }> {
  expectScope(key, "submit");
  const text = textOf(message);
  if (text.trim() === "") {
    throw new A2aRpcError(A2A_ERRORS.invalidParams, "message: no text part to run");
  }
  const sessionId = message.contextId ?? contextOf(key, message.messageId);
  const { run, events } = await startFollowedRun(
    services,
    key,
    { input: text, sessionId, ...(agent !== undefined ? { agent } : {}) },
    `a2a:${sessionId}:${message.messageId}`,
    "newSession",
  );
  return { run: { runId: run.runId, sessionId: run.sessionId, afterSeq: run.afterSeq }, events };
}

/** The decisions a message on a task waiting for input says. */
interface SaidDecision {
  approved: boolean;
  callId?: string;
  reason?: string;
}

/**
 * The decisions in `message`: each data part `{ approved, callId?, reason? }`, else a text
 * "approve" (or "yes") or "deny" (or "no") for every waiting call.
 */
function decisionsOf(message: SentMessage): SaidDecision[] {
  const said: SaidDecision[] = [];
  for (const part of message.parts) {
    const data = part.data as Record<string, unknown> | undefined;
    if (!data || typeof data.approved !== "boolean") continue;
    said.push({
      approved: data.approved,
      ...(typeof data.callId === "string" ? { callId: data.callId } : {}),
      ...(typeof data.reason === "string" ? { reason: data.reason } : {}),
    });
  }
  if (said.length > 0) return said;
  const word = textOf(message).trim().toLowerCase();
  if (["approve", "approved", "yes"].includes(word)) return [{ approved: true }];
  if (["deny", "denied", "no"].includes(word)) return [{ approved: false }];
  throw new A2aRpcError(
    A2A_ERRORS.invalidParams,
    'message: a task waiting for input takes a data part { approved, callId?, reason? } or the text "approve" or "deny"',
  );
}

/**
 * Decides the calls a message on task `taskId` answers (it waits for input: its calls await
 * approval; approve scope; the key's name as who decided) and returns the task's run. A task
 * that waits for no decision is `UnsupportedOperationError`.
 */
export async function continueTask(
  services: GatewayServices,
  key: GatewayKey,
  message: SentMessage & { taskId: string },
): Promise<TaskRun> {
  const run = await expectVisibleTask(services, key, message.taskId);
  expectScope(key, "approve");
  const pending = await callsAwaitedBy(services, run);
  if (pending.length === 0) {
    throw new A2aRpcError(
      A2A_ERRORS.unsupportedOperation,
      `task ${message.taskId} waits for no input (a new message starts a new task: leave out taskId)`,
    );
  }
  for (const decision of decisionsOf(message)) {
    const callIds = decision.callId ? [decision.callId] : pending.map((p) => p.callKey);
    for (const callId of callIds) {
      const call = await locateWaitingCall(services, run.sessionId, callId, "callId");
      if (!call) {
        throw new A2aRpcError(A2A_ERRORS.invalidParams, `callId: ${callId} waits for no decision`);
      }
      const reason = decision.reason ? { reason: decision.reason } : {};
      await decideCall(
        services,
        call,
        { callId, approved: decision.approved, ...reason },
        key.name,
        "callId",
      );
    }
  }
  return run;
}

/**
 * The calls task `run` waits for a decision on (`awaitedCalls` of its session, while its run
 * is the session's open run: a later run's calls are not this task's).
 */
async function callsAwaitedBy(services: GatewayServices, run: TaskRun) {
  const pending = await awaitedCalls(services, run.sessionId);
  if (pending.length === 0) return pending;
  return (await services.store.openRunOf(run.sessionId)) === run.runId ? pending : [];
}

/** A task read from its run's stored events, and the session's event it was read up to. */
export interface ReadTask {
  task: A2aTask;
  seq: number;
}

/**
 * The task as it stands now, rebuilt from its run's stored events (no gateway keeps it):
 * then, for a run that has not ended, `TASK_STATE_INPUT_REQUIRED` while its calls wait for a
 * decision, or `TASK_STATE_FAILED` when the coordinators refused it. `seq` is where a stream
 * of its later events starts.
 */
export async function readTask(services: GatewayServices, run: TaskRun): Promise<ReadTask> {
  const task = new A2aTask(run.runId, run.sessionId);
  const latest = await services.store.latestEventSeq(run.sessionId);
  if (latest > run.afterSeq) {
    const stop = new AbortController();
    const saw = (seq: number) => {
      if (seq >= latest) stop.abort();
    };
    try {
      for await (const event of followRun(services, run, run.afterSeq, stop.signal, saw)) {
        task.eventsOf(event);
      }
    } catch (err) {
      if (!(err instanceof GatewayError) || err.code !== "run_refused") throw err;
      task.failed(err.message);
    }
  }
  const seq = Math.max(latest, run.afterSeq);
  if (task.ended) return { task, seq };
  const pending = await callsAwaitedBy(services, run);
  if (pending.length > 0) task.parked(pending);
  else {
    const refusal = await services.client.requestRefusal(run.runId);
    if (refusal !== undefined) task.failed(`the run was refused: ${refusal}`);
  }
  return { task, seq };
}

/** How long a cancel waits for the run to be its session's open run, then to end. */
const CANCEL_WAIT_MS = 10_000;

/**
 * Cancels task `run` (the durable abort of its session's run: a parked run is stopped too,
 * its running calls cancelled on the workers) and returns it once it ended (or as it stands
 * after 10 s). A task that ended, or whose run is not its session's open run, is
 * `TaskNotCancelableError`.
 */
export async function cancelTask(services: GatewayServices, run: TaskRun): Promise<A2aTaskObject> {
  const { task: now } = await readTask(services, run);
  if (now.ended) {
    throw new A2aRpcError(A2A_ERRORS.taskNotCancelable, `task ${run.runId} is ${now.state}`);
  }
  const until = Date.now() + CANCEL_WAIT_MS;
  while ((await services.store.openRunOf(run.sessionId)) !== run.runId) {
    if (Date.now() >= until) {
      throw new A2aRpcError(
        A2A_ERRORS.taskNotCancelable,
        `task ${run.runId} is not its context's open run (it waits behind another)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await services.client.abort(run.sessionId);
  let { task } = await readTask(services, run);
  while (!task.ended && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    ({ task } = await readTask(services, run));
  }
  return task.snapshot();
}

/**
 * Follows `run` until it ends or waits for approval (the client gone, the gateway shutting
 * down: the run goes on), folding its events into `task` and handing each stream event to
 * `send`; the task's input-required state is added when the run parks. `events`: the run's,
 * followed since before it was queued (`startTask`).
 */
export async function followTask(
  services: GatewayServices,
  run: TaskRun,
  task: A2aTask,
  gone: AbortSignal,
  send: (events: A2aStreamEvent[]) => void,
  events?: RunEvents,
): Promise<void> {
  const watch = watchParkedRun(services, run, run.afterSeq);
  try {
    const until = AbortSignal.any([gone, watch.signal]);
    for await (const event of followRun(services, run, run.afterSeq, until, watch.saw, events)) {
      send(task.eventsOf(event));
    }
    if (!task.ended && watch.signal.aborted && !gone.aborted) send(task.parked(watch.pending));
  } catch (err) {
    if (!(err instanceof GatewayError) || err.code !== "run_refused") throw err;
    send(task.failed(`the run was refused: ${err.message}`));
  } finally {
    watch.stop();
  }
}

/** What a task's stream answers: the task's run and task, and how each event travels. */
export interface TaskStream {
  run: TaskRun;
  task: A2aTask;
  /**
   * The JSON of one server-sent event carrying `event`: a JSON-RPC response of the request
   * (in its protocol version's shape), or the bare `StreamResponse` of the HTTP+JSON binding.
   */
  frame(event: A2aStreamEvent): unknown;
  /** The run's events, followed since before it was queued (a task just started). */
  events?: RunEvents;
}

/**
 * Answers with the task's stream (server-sent events, each `stream.frame` of a stream event):
 * the task first, then each change until it ends or waits for input. Closing the stream
 * leaves the run going.
 */
export async function streamTask(
  services: GatewayServices,
  key: GatewayKey,
  res: ServerResponse,
  stream: TaskStream,
): Promise<void> {
  const { run, task, frame } = stream;
  const { signal, release } = streamSignal(services, res, key);
  const stalled = new AbortController();
  res.setHeader("X-Yiem-Session", run.sessionId);
  res.setHeader("X-Yiem-Run", run.runId);
  const stopHeartbeat = openEventStream(res, services.heartbeatMs, () => stalled.abort());
  const gone = AbortSignal.any([signal, stalled.signal]);
  const send = (events: A2aStreamEvent[]) => {
    if (gone.aborted) return;
    for (const event of events) {
      res.write(`data: ${JSON.stringify(frame(event))}\n\n`);
    }
  };
  try {
    send([{ task: task.snapshot() }]);
    if (task.ended || task.state === "TASK_STATE_INPUT_REQUIRED") return;
    await followTask(services, run, task, gone, send, stream.events);
  } catch (err) {
    const reason = (err as Error).message;
    services.log.warn({ sessionId: run.sessionId, err: reason }, "A2A stream failed");
    send(task.failed("internal error"));
  } finally {
    stopHeartbeat();
    release();
    res.end();
  }
}
