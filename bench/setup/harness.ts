import { randomUUID } from "node:crypto";
import type { RedisClient } from "@yiem/core";
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
  type EmitFn,
  executeToolCalls,
  type ToolExecutor,
} from "@yiem/core";
import {
  buildCoordinatorContext,
  type CoordinatorContext,
  createEventPublisher,
  createRemoteExecutor,
  DURABLE_CONNECTION,
  openSessionStore,
  openToolQueues,
  PipelinedTranscript,
  resolveCoordinatorOptions,
  type SessionStore,
  silentLogger,
  toolQueueFactory,
} from "@yiem/core/internal";
import type { Queue } from "bullmq";
import { benchTools } from "./tools.js";
import { TracingWaiter } from "./tracingWaiter.js";

/** How long a benchmark session's lease lasts: longer than the whole benchmark. */
const LEASE_MS = 10 * 60_000;

/** The coordinator side of the benchmark, built by the coordinator's own builder. */
export interface Harness {
  url: string;
  prefix: string;
  keys: ClusterKeys;
  /** The one command connection of the coordinator side (queues, events, transcript). */
  command: RedisClient;
  /** The coordinator side's `ResultWaiter` (able to trace phases for the breakdown). */
  waiter: TracingWaiter;
  /** The tool queue (shard) a session's calls go to, as a coordinator's runs get it. */
  queueFor: (queue: string | undefined, sessionId: string) => Promise<Queue>;
  /** How the coordinator caps each session's replay stream. */
  streamCaps: CoordinatorContext["streamCaps"];
  store: SessionStore;
  tools: Map<string, AgentTool>;
  close(): Promise<void>;
}

/**
 * Opens the coordinator side with the builder `startCoordinator` uses
 * (`buildCoordinatorContext`, with the coordinator's defaults): one command connection, a
 * `ResultWaiter` (a `TracingWaiter`, with its own subscriber connection for the job ends
 * workers announce, closed with it), the tool queues of the bench's tools opened and listened
 * to (`openToolQueues`), a run's `queueFor` (`toolQueueFactory`) and the session store
 * (`openSessionStore`).
 */
export async function openHarness(url: string, prefix: string): Promise<Harness> {
  const settings = resolveCoordinatorOptions({ prefix });
  const keys = clusterKeys(prefix);
  const command = connectRedis(url, DURABLE_CONNECTION);
  const ctx = buildCoordinatorContext(
    settings,
    { keys, command, log: silentLogger },
    (connection, k, options) => new TracingWaiter(connection, k, options),
  );
  const { waiter } = ctx;
  const tools = new Map(benchTools().map((tool) => [tool.name, tool]));
  await openToolQueues([...tools.values()], ctx, silentLogger);
  return {
    url,
    prefix,
    keys,
    command,
    waiter,
    queueFor: toolQueueFactory(ctx),
    streamCaps: ctx.streamCaps,
    store: openSessionStore(ctx),
    tools,
    async close() {
      await waiter.close();
      await Promise.all([...ctx.toolQueues.values()].map(async (q) => (await q).close()));
      await command.quit();
    },
  };
}

/** One benchmark session: a held lease, an open run, its executor and its event emitters. */
export interface BenchSession {
  sessionId: string;
  runId: string;
  token: string;
  /** `createRemoteExecutor` for this session's run. */
  remote: ToolExecutor;
  /**
   * The coordinator's emitter: `createEventPublisher(command, keys, origin, caps).emit` sends the
   * event (`publishEvent`) on the command connection and returns without awaiting the reply.
   */
  emit: EmitFn;
  /**
   * The session's transcript writes as the coordinator makes them: a batch's results appended
   * without waiting for the reply, the next write (here: the next batch's append) right
   * behind, guarded. `settle()` waits for the last one.
   */
  transcript: PipelinedTranscript;
  /** The transcript's length as the session knows it. */
  length: number;
}

/** Opens session `name`: takes its lease and builds its remote executor and emitters. */
export async function openSession(h: Harness, name: string): Promise<BenchSession> {
  const sessionId = `bench-${name}`;
  const runId = randomUUID().slice(0, 8);
  const token = `bench:${randomUUID()}`;
  if (!(await h.store.acquire(sessionId, token, LEASE_MS)))
    throw new Error(`could not take the lease of ${sessionId}`);
  const origin = { sessionId, runId };
  const session: BenchSession = {
    sessionId,
    runId,
    token,
    remote: createRemoteExecutor({ sessionId, runId, queueFor: h.queueFor, waiter: h.waiter }),
    emit: createEventPublisher(h.command, h.keys, origin, h.streamCaps).emit,
    transcript: new PipelinedTranscript(sessionId, () => session.length),
    length: await h.command.llen(h.keys.messages(sessionId)),
  };
  return session;
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
  /** The event sink; the session's coordinator emitter (`session.emit`) unless given. */
  emit?: EmitFn;
  /** Whether the result messages go to the session's transcript (`appendResults`). Default true. */
  persist?: boolean;
}

/**
 * Appends a batch's result messages to the session's transcript under its lease as the
 * coordinator does: one `SessionStore.appendMany` sent without waiting for its reply
 * (`PipelinedTranscript.appendBehind`); the session's next write waits for it.
 */
export function appendResults(h: Harness, session: BenchSession, messages: AgentMessage[]): void {
  const { sessionId, token, transcript } = session;
  transcript.appendBehind((expect) => h.store.appendMany(sessionId, token, messages, expect));
  session.length += messages.length;
}

/**
 * Runs one batch of `count` calls of `toolName` through Yiem's pipeline as the coordinator
 * does: `executeToolCalls` in parallel mode with the session's emitter, then the result
 * messages appended to the session's transcript under its lease in one fenced script sent
 * without waiting for its reply (as the coordinator's `appendMessages`; its reply is waited
 * for by the session's next write). The options replace the emitter or leave the results
 * unpersisted.
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
    { toolExecution: "parallel", executor: options.executor },
    undefined,
    options.emit ?? session.emit,
  );
  if (options.persist ?? true) appendResults(h, session, batch.messages);
  const failed = batch.messages.find((message) => message.isError);
  if (failed) throw new Error(`a benchmark call failed: ${JSON.stringify(failed.content)}`);
  return batch;
}
