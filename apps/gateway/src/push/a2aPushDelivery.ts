import { randomUUID } from "node:crypto";
import type { GatewayServices } from "../http/route.js";
import { readTask } from "../routes/a2aRun.js";
import type { A2aTaskObject } from "../routes/a2aTask.js";
import {
  claimPushTask,
  duePushTasks,
  listPushConfigs,
  markPushSent,
  readPushSent,
  releasePushTask,
  type StoredPushConfig,
  schedulePushTask,
} from "../state/a2aPushStore.js";
import { checkPushUrl } from "./pushTarget.js";

/** How often a gateway looks for tasks whose push notifications are due. */
const TICK_MS = 500;

/** How soon a task that goes on is looked at again. */
const FOLLOW_MS = 1000;

/** How soon a task waiting for a person's decision, its state told already, is looked at again. */
const WAITING_MS = 5000;

/** How long a gateway holds a task's delivery (renewed by each look; lapses if it dies). */
const LEASE_MS = 15_000;

/** How long one webhook POST may take. */
const POST_TIMEOUT_MS = 5000;

/** Failed POSTs of one notification before it is given up (retried 1 s, 2 s, 4 s … 60 s apart). */
const MAX_FAILURES = 10;

/** The token header of a config without `authentication` (as @a2a-js/sdk's sender sends it). */
export const PUSH_TOKEN_HEADER = "X-A2A-Notification-Token";

/** A running delivery loop. */
export interface PushDelivery {
  /** Stops looking (a delivery under way finishes). */
  stop(): Promise<void>;
}

/**
 * Starts this gateway's share of A2A push notification delivery: every `TICK_MS` it takes the
 * tasks whose delivery is due (a Redis line every gateway reads), claims each with a lease in
 * Redis (`LEASE_MS`: one gateway at a time; a gateway SIGKILLed lets it lapse and another
 * takes the task on), and rebuilds the task from its run's durable events (`readTask`). A
 * state not delivered yet to a config (its mark, kept in Redis per config) is POSTed to its
 * webhook as a `statusUpdate` (a `StreamResponse`), then the final task (`{ task }`) once the
 * task ended; the mark is recorded after the webhook answered 2xx, so a delivery is never
 * lost, at least once (a gateway that dies between the POST and the mark sends it again).
 */
export function startPushDelivery(services: GatewayServices): PushDelivery {
  const holder = randomUUID();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    const due = await duePushTasks(services.store, 20).catch(() => []);
    for (const taskId of due) {
      if (stopped) return;
      if (!(await claimPushTask(services.store, taskId, holder, LEASE_MS).catch(() => false))) {
        continue;
      }
      try {
        await deliverTask(services, taskId);
      } catch (err) {
        services.log.warn({ taskId, err: (err as Error).message }, "push delivery failed");
        await schedulePushTask(services.store, taskId, Date.now() + FOLLOW_MS).catch(() => {});
      } finally {
        await releasePushTask(services.store, taskId, holder).catch(() => {});
      }
    }
  };
  const loop = () => {
    if (stopped) return;
    running = tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, TICK_MS);
    });
  };
  timer = setTimeout(loop, TICK_MS);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running.catch(() => {});
    },
  };
}

/** The mark of what a task says now: its state, and for input required the calls it waits for. */
function markOf(task: A2aTaskObject): string {
  const { state, message } = task.status;
  if (state !== "TASK_STATE_INPUT_REQUIRED") return state;
  const calls = (message?.parts ?? []).flatMap((part) =>
    "data" in part && Array.isArray(part.data.approvals)
      ? part.data.approvals.map((a) => String((a as { callId?: unknown }).callId))
      : [],
  );
  return `${state}:${calls.join(",")}`;
}

/** Delivers what task `taskId` says now to each of its configs not told yet; schedules the next look. */
async function deliverTask(services: GatewayServices, taskId: string): Promise<void> {
  const configs = await listPushConfigs(services.store, taskId);
  const record = configs.length > 0 ? await services.store.readRun(taskId) : undefined;
  if (!record) return schedulePushTask(services.store, taskId, "done");
  const run = { runId: taskId, sessionId: record.sessionId, afterSeq: record.afterSeq ?? 0 };
  const { task } = await readTask(services, run);
  const snapshot = task.snapshot();
  const mark = markOf(snapshot);
  const sent = await readPushSent(services.store, taskId);
  let retryIn = 0;
  for (const config of configs) {
    if (sent[config.id] === mark) continue;
    const failures = Number(sent[`${config.id}#failures`] ?? 0);
    const delivered = await deliverState(services, config, snapshot, task.ended);
    if (delivered || failures + 1 >= MAX_FAILURES) {
      if (!delivered)
        services.log.warn({ taskId, config: config.id }, "push notification given up");
      await markPushSent(services.store, taskId, config.id, mark);
      await markPushSent(services.store, taskId, `${config.id}#failures`, "0");
    } else {
      await markPushSent(services.store, taskId, `${config.id}#failures`, String(failures + 1));
      const wait = Math.min(60_000, 1000 * 2 ** failures);
      retryIn = retryIn === 0 ? wait : Math.min(retryIn, wait);
    }
  }
  if (retryIn > 0) return schedulePushTask(services.store, taskId, Date.now() + retryIn);
  if (task.ended) return schedulePushTask(services.store, taskId, "done");
  const waiting = snapshot.status.state === "TASK_STATE_INPUT_REQUIRED";
  await schedulePushTask(services.store, taskId, Date.now() + (waiting ? WAITING_MS : FOLLOW_MS));
}

/** POSTs the task's status (and, once it ended, the task) to `config`'s webhook; whether both landed. */
async function deliverState(
  services: GatewayServices,
  config: StoredPushConfig,
  task: A2aTaskObject,
  ended: boolean,
): Promise<boolean> {
  const update = {
    statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status },
  };
  if (!(await postNotification(services, config, update))) return false;
  return !ended || (await postNotification(services, config, { task }));
}

/**
 * POSTs `body` (a `StreamResponse`) to `config.url`, its host checked again against the
 * allowed hosts, with the config's token (`X-A2A-Notification-Token`) or authentication
 * (`Authorization`); never follows a redirect (a 3xx is a failure). Whether it answered 2xx.
 */
async function postNotification(
  services: GatewayServices,
  config: StoredPushConfig,
  body: unknown,
): Promise<boolean> {
  try {
    const url = checkPushUrl(config.url, services.a2aPushHosts);
    const headers: Record<string, string> = { "Content-Type": "application/a2a+json" };
    if (config.authentication) {
      const { scheme, credentials } = config.authentication;
      headers.Authorization = `${scheme} ${credentials}`;
    } else if (config.token) headers[PUSH_TOKEN_HEADER] = config.token;
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(POST_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    if (response.ok) return true;
    services.log.warn({ taskId: config.taskId, status: response.status }, "push webhook refused");
    return false;
  } catch (err) {
    services.log.warn({ taskId: config.taskId, err: (err as Error).message }, "push POST failed");
    return false;
  }
}
