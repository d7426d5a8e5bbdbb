import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { DelayedError, type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { DEFAULT_SYSTEM_PROMPT } from "../agent/agentState.js";
import type { ExtractToolCallsOptions } from "../tools/extractToolCalls.js";
import { registerTool, type ToolStore } from "../tools/toolStore.js";
import type {
  AfterToolCallHook,
  AgentEvent,
  BeforeToolCallHook,
  LlmCall,
  ToolExecutionMode,
} from "../types/index.js";
import {
  createWriteTool,
  createWrittenToolsSync,
  isWriteToolAllowed,
} from "../writtenTools/index.js";
import { startAdminServer } from "./adminServer.js";
import { parseControlMessage } from "./controlMessages.js";
import { type ClusterKeys, COORDINATOR_QUEUE, clusterKeys, toolQueueName } from "./keys.js";
import { type Logger, silentLogger } from "./logger.js";
import { createCoordinatorMetrics } from "./metrics.js";
import { connectRedis, DURABLE_CONNECTION, type RedisTarget } from "./redisConnection.js";
import { type JobEnd, ResultWaiter } from "./resultWaiter.js";
import { type HeldSession, processSession, type SessionRunnerDeps } from "./sessionRunner.js";
import { SessionStore } from "./sessionStore.js";

/** Options of `startCoordinator`. */
export interface CoordinatorOptions {
  redis: RedisTarget;
  prefix?: string;
  llmCall: LlmCall;
  toolStore: ToolStore;
  systemPrompt?: string;
  maxTurns?: number;
  /** Caps on the model's tool calls: `maxToolCalls` per message (64), `maxArgumentBytes` (256 KiB). */
  limits?: ExtractToolCallsOptions;
  toolExecution?: ToolExecutionMode;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
  /** Sessions run at once. Default 64. */
  concurrency?: number;
  /** How long a hold on a session lasts without renewal. Default 10 s. */
  leaseMs?: number;
  /** BullMQ lock of a coordinator job; a coordinator silent this long is considered dead. Default 30 s. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  coordinatorId?: string;
  logger?: Logger;
  /** Sees every event this coordinator publishes (metrics). */
  observe?: (event: AgentEvent) => void;
  /** Serve Bull Board (`/admin/queues`), `/healthz` and `/metrics` on this port (0: any free one). */
  port?: number;
  /** Bull Board basic auth and read-only mode. */
  admin?: { user?: string; password?: string; readOnly?: boolean };
}

/** A running coordinator. */
export interface CoordinatorHandle {
  coordinatorId: string;
  /** Tool queues and the coordinator queue, for dashboards. */
  queues(): Queue[];
  /** Sessions held right now. */
  heldSessions(): number;
  /** The HTTP server's base URL when `port` was given. */
  url?: string;
  /**
   * Stops taking sessions, lets the held ones finish for up to `graceMs` (default 10 s),
   * hands the rest over to other coordinators, then closes every connection.
   */
  close(graceMs?: number): Promise<void>;
}

interface CoordinatorContext {
  keys: ClusterKeys;
  command: Redis;
  held: Map<string, HeldSession>;
  toolQueues: Map<string, Promise<Queue>>;
  /** The tool queues created so far (for dashboards). */
  readyQueues: Queue[];
  waiter: ResultWaiter;
  closing: boolean;
}

function queueFactory(ctx: CoordinatorContext) {
  return (queue: string | undefined): Promise<Queue> => {
    const name = toolQueueName(queue);
    let created = ctx.toolQueues.get(name);
    if (!created) {
      const q = new Queue(name, { connection: ctx.command, prefix: ctx.keys.bullPrefix });
      created = ctx.waiter.listen(q).then(() => {
        ctx.readyQueues.push(q);
        return q;
      });
      ctx.toolQueues.set(name, created);
    }
    return created;
  };
}

/** Puts a job back for later (or for another coordinator) without counting an attempt. */
async function postpone(job: Job, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

function sessionProcessor(ctx: CoordinatorContext, deps: SessionRunnerDeps, coordinatorId: string) {
  const retryMs = Math.min(1000, Math.max(50, Math.floor(deps.leaseMs / 4)));
  return async (job: Job<{ sessionId: string }>, token?: string): Promise<string> => {
    const { sessionId } = job.data;
    if (ctx.closing) return postpone(job, token, 0);
    const leaseToken = `${coordinatorId}:${randomUUID()}`;
    if (!(await deps.store.acquire(sessionId, leaseToken, deps.leaseMs))) {
      // Another coordinator holds it. While work is pending keep this job as a safety net:
      // if that holder dies, this job is how the session gets resumed.
      if (await deps.store.hasPendingWork(sessionId)) return postpone(job, token, retryMs);
      return "held elsewhere";
    }
    const register = (held: HeldSession | undefined) => {
      if (held) ctx.held.set(sessionId, held);
      else ctx.held.delete(sessionId);
    };
    const outcome = await processSession(deps, sessionId, leaseToken, register);
    if (outcome === "handedOver") return postpone(job, token, 0);
    // The lease was lost (e.g. Redis away longer than the lease): this job stays the safety
    // net until whoever holds the session now has finished its work.
    if (outcome === "lost") return postpone(job, token, retryMs);
    return outcome;
  };
}

/**
 * With `YIEM_ALLOW_WRITE_TOOL=1`: registers `writeTool` and the tools written so far, and
 * returns the sync that picks up tools written elsewhere before each LLM call.
 */
async function enableWrittenTools(options: CoordinatorOptions, command: Redis, keys: ClusterKeys) {
  if (!isWriteToolAllowed()) return undefined;
  const store = options.toolStore;
  const written = createWrittenToolsSync({ redis: command, prefix: keys.prefix, store });
  registerTool(
    store,
    createWriteTool({ redis: command, prefix: keys.prefix, store, allowed: true }),
  );
  await written.sync();
  return written;
}

/** Aborts the current run of a session this coordinator holds. */
function listenForAborts(ctx: CoordinatorContext, subscriber: Redis, log: Logger): void {
  subscriber.on("message", (_channel, text) => {
    const message = parseControlMessage(text);
    if (!message) return;
    const held = ctx.held.get(message.sessionId);
    if (held?.controller) {
      log.info({ sessionId: message.sessionId }, "run aborted");
      held.controller.abort();
    }
  });
}

/**
 * Starts a coordinator (see `startCoordinatorRuntime` below for what it does) and, when
 * `port` is given, its HTTP side: Bull Board at `/admin/queues` with every queue, `/healthz`
 * and Prometheus `/metrics` (tool calls by tool and outcome, durations, queue depths, LLM latency).
 *
 * @example
 * const coordinator = await startCoordinator({ redis: process.env.REDIS_URL!, llmCall, toolStore, port: 3000 });
 * process.on("SIGTERM", () => coordinator.close());
 */
export async function startCoordinator(options: CoordinatorOptions): Promise<CoordinatorHandle> {
  if (options.port === undefined) return startCoordinatorRuntime(options);
  const metrics = createCoordinatorMetrics();
  const observe = (event: AgentEvent) => {
    metrics.observe(event);
    options.observe?.(event);
  };
  const runtime = await startCoordinatorRuntime({
    ...options,
    llmCall: metrics.timeLlmCall(options.llmCall),
    observe,
  });
  const admin = await startAdminServer({
    port: options.port,
    queues: () => runtime.queues(),
    metrics,
    health: () => ({ coordinatorId: runtime.coordinatorId, heldSessions: runtime.heldSessions() }),
    adminUser: options.admin?.user,
    adminPassword: options.admin?.password,
    readOnly: options.admin?.readOnly,
  });
  return {
    ...runtime,
    url: admin.url,
    async close(graceMs) {
      await runtime.close(graceMs);
      await admin.close();
    },
  };
}

/**
 * The coordinator itself: consumes the coordinator queue, holds each session it works on with
 * a renewed, fenced lease, runs the agent loop and the LLM calls, runs sequential batches in
 * this process and sends parallel batches to the tool queues, and publishes every event.
 *
 * @example
 * const coordinator = await startCoordinator({ redis: process.env.REDIS_URL!, llmCall, toolStore });
 * process.on("SIGTERM", () => coordinator.close());
 */
async function startCoordinatorRuntime(options: CoordinatorOptions): Promise<CoordinatorHandle> {
  const keys = clusterKeys(options.prefix ?? "yiem");
  const command = connectRedis(options.redis, DURABLE_CONNECTION);
  const log = options.logger ?? silentLogger;
  const coordinatorId = options.coordinatorId ?? `${hostname()}-${process.pid}`;
  const ctx: CoordinatorContext = {
    keys,
    command,
    held: new Map(),
    toolQueues: new Map(),
    readyQueues: [],
    waiter: new ResultWaiter(command, keys.bullPrefix),
    closing: false,
  };
  const deps = await runnerDeps(options, ctx, log);
  const subscriber = await subscribeToControl(ctx, log);
  const queueNames = new Set([
    undefined,
    ...[...options.toolStore.tools.values()].map((t) => t.queue),
  ]);
  await Promise.all([...queueNames].map((name) => deps.queueFor(name)));
  const coordinatorQueue = new Queue(COORDINATOR_QUEUE, {
    connection: command,
    prefix: keys.bullPrefix,
  });
  const worker = new Worker(COORDINATOR_QUEUE, sessionProcessor(ctx, deps, coordinatorId), {
    connection: command, // BullMQ duplicates it for its blocking reads
    prefix: keys.bullPrefix,
    concurrency: options.concurrency ?? 64,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount: 1000, // a stall is a dead coordinator: always let another resume
    name: coordinatorId,
  });
  worker.on("error", (err) => log.warn({ err: err.message }, "coordinator queue error"));
  await worker.waitUntilReady();
  log.info({ coordinatorId }, "coordinator started");
  return {
    coordinatorId,
    heldSessions: () => ctx.held.size,
    queues: () => [coordinatorQueue, ...ctx.readyQueues],
    close: (graceMs = 10_000) =>
      closeCoordinator(ctx, worker, subscriber, coordinatorQueue, graceMs, log),
  };
}

/** What every session this coordinator runs gets from it. */
async function runnerDeps(
  options: CoordinatorOptions,
  ctx: CoordinatorContext,
  log: Logger,
): Promise<SessionRunnerDeps> {
  const { command, keys } = ctx;
  const written = await enableWrittenTools(options, command, keys);
  return {
    store: new SessionStore(command, keys),
    command,
    keys,
    leaseMs: options.leaseMs ?? 10_000,
    llmCall: options.llmCall,
    toolStore: options.toolStore,
    systemPrompt: options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    maxTurns: options.maxTurns,
    limits: options.limits,
    toolExecution: options.toolExecution ?? "parallel",
    beforeToolCall: options.beforeToolCall,
    afterToolCall: options.afterToolCall,
    queueFor: queueFactory(ctx),
    waiter: ctx.waiter,
    log,
    observe: options.observe,
    syncWrittenTools: written ? () => written.sync() : undefined,
  };
}

/** Subscribes to the control channel (aborts); both connections log errors and reconnect by themselves. */
async function subscribeToControl(ctx: CoordinatorContext, log: Logger): Promise<Redis> {
  const subscriber = ctx.command.duplicate();
  for (const connection of [ctx.command, subscriber]) {
    connection.on("error", (err: Error) =>
      log.debug({ err: err.message }, "redis connection error (reconnecting)"),
    );
  }
  listenForAborts(ctx, subscriber, log);
  await subscriber.subscribe(ctx.keys.controlChannel);
  return subscriber;
}

async function closeCoordinator(
  ctx: CoordinatorContext,
  worker: Worker,
  subscriber: Redis,
  coordinatorQueue: Queue,
  graceMs: number,
  log: Logger,
): Promise<void> {
  ctx.closing = true;
  const closing = worker.close();
  const timer = setTimeout(() => {
    log.info({ sessions: ctx.held.size }, "handing over the sessions still held");
    for (const held of ctx.held.values()) void held.handOver();
  }, graceMs);
  await closing;
  clearTimeout(timer);
  subscriber.disconnect();
  await ctx.waiter.close();
  await Promise.all([coordinatorQueue, ...ctx.readyQueues].map((q) => q.close()));
  await ctx.command.quit().catch(() => undefined);
  log.info("coordinator stopped");
}
