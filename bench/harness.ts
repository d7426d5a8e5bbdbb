import { randomUUID } from "node:crypto";
import {
  type AgentContext,
  type AgentMessage,
  type AgentTool,
  type AgentToolCall,
  type AgentToolCallBatch,
  type AssistantMessage,
  type ClusterKeys,
  clusterKeys,
  connectRedis,
  createRemoteExecutor,
  DURABLE_CONNECTION,
  type EmitFn,
  executeToolCalls,
  publishEvent,
  SessionStore,
  type ToolExecutor,
  toolQueueName,
} from "@yiem/core";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { benchTools } from "./tools.js";
import { TracingWaiter } from "./tracingWaiter.js";

/** How long a benchmark session's lease lasts: longer than the whole benchmark. */
const LEASE_MS = 10 * 60_000;

/** The coordinator side of the benchmark, built as `startCoordinator` builds it. */
export interface Harness {
  url: string;
  prefix: string;
  keys: ClusterKeys;
  /** The one command connection of the coordinator side (queues, events, transcript). */
  command: Redis;
  /** The coordinator side's `ResultWaiter` (able to trace phases for the breakdown). */
  waiter: TracingWaiter;
  queueFor: (queue: string | undefined) => Promise<Queue>;
  store: SessionStore;
  tools: Map<string, AgentTool>;
  close(): Promise<void>;
}

/**
 * Opens the coordinator side: one command connection, a `ResultWaiter`, and a `queueFor`
 * that creates each tool queue once and starts listening to it (as the coordinator's
 * `queueFactory` does).
 *
 * The command connection is lazy: `ResultWaiter.listen` calls `connection.duplicate()` and
 * `QueueEvents` duplicates that again, so an eager connection would leave the first duplicate
 * connected (and reconnecting) after `close()`. Lazily, that duplicate never connects.
 */
export async function openHarness(url: string, prefix: string): Promise<Harness> {
  const keys = clusterKeys(prefix);
  const command = connectRedis(url, { ...DURABLE_CONNECTION, lazyConnect: true });
  await command.connect();
  const waiter = new TracingWaiter(command, keys.bullPrefix);
  const queues = new Map<string, Promise<Queue>>();
  const created: Queue[] = [];
  const queueFor = (queue: string | undefined) => {
    const name = toolQueueName(queue);
    let ready = queues.get(name);
    if (!ready) {
      const q = new Queue(name, { connection: command, prefix: keys.bullPrefix });
      created.push(q);
      ready = waiter.listen(q).then(() => q);
      queues.set(name, ready);
    }
    return ready;
  };
  await queueFor(undefined);
  const tools = new Map(benchTools().map((tool) => [tool.name, tool]));
  return {
    url,
    prefix,
    keys,
    command,
    waiter,
    queueFor,
    store: new SessionStore(command, keys),
    tools,
    async close() {
      await waiter.close();
      await Promise.all(created.map((q) => q.close()));
      await command.quit();
    },
  };
}

/** One benchmark session: a held lease, an open run, its executor and its event emitter. */
export interface BenchSession {
  sessionId: string;
  runId: string;
  token: string;
  /** `createRemoteExecutor` for this session's run. */
  remote: ToolExecutor;
  /** Publishes an event on the bus as the coordinator does (`publishEvent`). */
  emit: EmitFn;
}

/** Opens session `name`: takes its lease and builds its remote executor and emitter. */
export async function openSession(h: Harness, name: string): Promise<BenchSession> {
  const sessionId = `bench-${name}`;
  const runId = randomUUID().slice(0, 8);
  const token = `bench:${randomUUID()}`;
  if (!(await h.store.acquire(sessionId, token, LEASE_MS)))
    throw new Error(`could not take the lease of ${sessionId}`);
  const origin = { sessionId, runId };
  return {
    sessionId,
    runId,
    token,
    remote: createRemoteExecutor({ sessionId, runId, queueFor: h.queueFor, waiter: h.waiter }),
    emit: async (event) => {
      await publishEvent(h.command, h.keys, origin, event);
    },
  };
}

let callCounter = 0;

/** `count` calls of `toolName` with fresh ids, as one assistant message would carry them. */
export function toolCalls(toolName: string, count: number): AgentToolCall[] {
  return Array.from({ length: count }, () => ({
    type: "function" as const,
    id: `call_${++callCounter}`,
    name: toolName,
    arguments: {},
  }));
}

function assistantMessageOf(calls: AgentToolCall[]): AssistantMessage {
  return {
    role: "assistant",
    content: calls.map((call) => ({
      type: "toolCall" as const,
      id: call.id,
      name: call.name,
      arguments: call.arguments,
    })),
    stopReason: "toolUse",
    timestamp: Date.now(),
  };
}

/** How a batch runs in the benchmark. */
export interface BatchOptions {
  /** The executor; `undefined` is the default in-process executor. */
  executor: ToolExecutor | undefined;
  /** The event sink; the session's bus emitter unless given. */
  emit?: EmitFn;
  /** Append each result message to the session transcript (`SessionStore.append`). Default true. */
  persist?: boolean;
  /**
   * What-if: send the appends of a batch together (pipelined on the one connection, still in
   * order) instead of one round trip after another as the agent loop does.
   */
  pipelineAppends?: boolean;
}

async function appendResults(
  h: Harness,
  session: BenchSession,
  messages: AgentMessage[],
  pipelined: boolean,
): Promise<void> {
  const append = async (message: AgentMessage) => {
    if (!(await h.store.append(session.sessionId, session.token, message)))
      throw new Error(`lease of ${session.sessionId} lost`);
  };
  if (pipelined) await Promise.all(messages.map(append));
  else for (const message of messages) await append(message);
}

/**
 * Runs one batch of `count` calls of `toolName` through Yiem's pipeline as the agent loop
 * does: `executeToolCalls` in parallel mode, then each result message appended, in order,
 * to the session's transcript under its lease.
 */
export async function runBatch(
  h: Harness,
  session: BenchSession,
  toolName: string,
  count: number,
  options: BatchOptions,
): Promise<AgentToolCallBatch> {
  const calls = toolCalls(toolName, count);
  const context: AgentContext = { systemPrompt: "bench", messages: [], tools: h.tools };
  const batch = await executeToolCalls(
    context,
    assistantMessageOf(calls),
    calls,
    { tools: h.tools, toolExecution: "parallel", executor: options.executor },
    undefined,
    options.emit ?? session.emit,
  );
  if (options.persist ?? true)
    await appendResults(h, session, batch.messages, options.pipelineAppends ?? false);
  const failed = batch.messages.find((message) => message.isError);
  if (failed) throw new Error(`a benchmark call failed: ${JSON.stringify(failed.content)}`);
  return batch;
}
