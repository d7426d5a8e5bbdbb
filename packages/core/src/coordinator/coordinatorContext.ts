import { Queue } from "bullmq";
import type { Logger } from "../ops/logger.js";
import { remoteQueueOf } from "../protocol/toolQueues.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import type { ReplicaAcks } from "../redis/replicaAcks.js";
import { DEFAULTS } from "../settings/defaults.js";
import { type StreamCaps, streamCaps } from "../state/eventBus.js";
import { SessionStore } from "../state/sessionStore.js";
import { syncToolLimits } from "../state/toolLimits.js";
import type { AgentTool } from "../types/index.js";
import { ResultWaiter, type ResultWaiterOptions } from "./run/resultWaiter.js";

/**
 * The connections, keys and tool queues every part of a coordinator shares: built once by
 * `buildCoordinatorContext`, by the coordinator and by the benchmark's harness alike.
 */
export interface CoordinatorContext<W extends ResultWaiter = ResultWaiter> {
  keys: ClusterKeys;
  command: RedisClient;
  acks: ReplicaAcks;
  /** How each session's replay stream is capped. */
  streamCaps: StreamCaps;
  /** Each tool queue (shard) opened so far, by name, ready once it is listened to. */
  toolQueues: Map<string, Promise<Queue>>;
  /** The tool queues created so far (for dashboards). */
  readyQueues: Queue[];
  waiter: W;
}

/** The settings `buildCoordinatorContext` reads (the coordinator's resolved options carry them). */
export interface CoordinatorContextSettings {
  /** Replicas each session write waits for; default `DEFAULTS.clusterReplicaAcks` on a cluster, else 0. */
  replicaAcks?: number;
  replicaAckTimeoutMs: number;
  eventStreamMaxBytes: number;
  stoppedWorkerGraceMs: number;
}

/** The process's connections the context is built on (a `ProcessRuntime` has them). */
export interface CoordinatorConnections {
  keys: ClusterKeys;
  command: RedisClient;
  /** The shared subscriber connection; without it the waiter opens (and closes) its own. */
  subscriber?: RedisClient;
  log: Logger;
}

/** Makes the coordinator's `ResultWaiter` (a benchmark passes one that traces phases). */
export type CreateWaiter<W extends ResultWaiter> = (
  command: RedisClient,
  keys: ClusterKeys,
  options: ResultWaiterOptions,
) => W;

/**
 * Builds the context a coordinator's parts share: the replica acknowledgements its writes
 * wait for, the caps of the replay streams, the `ResultWaiter` of its remote calls and the
 * (empty) map of its tool queues. Opens no queue: `openToolQueue` does, once per name.
 *
 * @example
 * const ctx = buildCoordinatorContext(resolvedOptions, runtime);
 * const queue = await openToolQueue(ctx, ctx.keys.toolQueueFor(undefined, "s-1"));
 */
export function buildCoordinatorContext(
  settings: CoordinatorContextSettings,
  connections: CoordinatorConnections,
): CoordinatorContext;
export function buildCoordinatorContext<W extends ResultWaiter>(
  settings: CoordinatorContextSettings,
  connections: CoordinatorConnections,
  createWaiter: CreateWaiter<W>,
): CoordinatorContext<W>;
export function buildCoordinatorContext(
  settings: CoordinatorContextSettings,
  connections: CoordinatorConnections,
  createWaiter: CreateWaiter<ResultWaiter> = (command, keys, options) =>
    new ResultWaiter(command, keys, options),
): CoordinatorContext {
  const { keys, command, log } = connections;
  return {
    keys,
    command,
    toolQueues: new Map(),
    readyQueues: [],
    waiter: createWaiter(command, keys, {
      subscriber: connections.subscriber,
      lateResultGraceMs: settings.stoppedWorkerGraceMs,
    }),
    acks: replicaAcksOf(settings, keys.layout.cluster, log),
    streamCaps: streamCaps(settings.eventStreamMaxBytes),
  };
}

/** How long between two warnings that replicas did not acknowledge writes in time. */
const SHORT_ACK_WARN_MS = 10_000;

/**
 * The replica acknowledgements session writes wait for: `replicaAcks` (by default
 * `DEFAULTS.clusterReplicaAcks` on a cluster, none on a single Redis). Writes that were not
 * acknowledged in time are warned about, at most once every 10 s.
 */
function replicaAcksOf(
  settings: CoordinatorContextSettings,
  cluster: boolean,
  log: Logger,
): ReplicaAcks {
  let warnedAt = 0;
  return {
    replicas: settings.replicaAcks ?? (cluster ? DEFAULTS.clusterReplicaAcks : 0),
    timeoutMs: settings.replicaAckTimeoutMs,
    onShort(script, acked) {
      if (Date.now() - warnedAt < SHORT_ACK_WARN_MS) return;
      warnedAt = Date.now();
      log.warn({ script, acked }, "session write not acknowledged by a replica in time");
    },
  };
}

/**
 * Opens (once) the BullMQ tool queue named `name` and starts listening for its jobs' ends;
 * the queue joins `readyQueues` once listened to.
 */
export function openToolQueue(ctx: CoordinatorContext, name: string): Promise<Queue> {
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
}

/** The queue (shard) of tool queue `queue` that a session's calls go to (`queueFor` of a run). */
export function toolQueueFactory(ctx: CoordinatorContext) {
  return (queue: string | undefined, sessionId: string): Promise<Queue> =>
    openToolQueue(ctx, ctx.keys.toolQueueFor(queue, sessionId));
}

/** The store of the sessions' transcripts, leases and runs, writing with the context's acks and caps. */
export function openSessionStore(ctx: CoordinatorContext): SessionStore {
  return new SessionStore(ctx.command, ctx.keys, ctx.acks, ctx.streamCaps);
}

/**
 * Opens every shard of the tool queues `tools` go to (the default one too), and brings the
 * limits stored on their queues in line with the tools (`syncToolLimits`).
 */
export async function openToolQueues(
  tools: readonly AgentTool[],
  ctx: CoordinatorContext,
  log: Logger,
): Promise<void> {
  const queues = new Set([undefined, ...tools.map(remoteQueueOf)]);
  const names = [...queues].flatMap((queue) => ctx.keys.toolQueues(queue));
  await Promise.all(names.map((name) => openToolQueue(ctx, name)));
  await syncToolLimits({ connection: ctx.command, keys: ctx.keys, tools, log });
}
