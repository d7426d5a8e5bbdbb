import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";

/** What a live tool worker announces about itself. */
export interface WorkerInfo {
  workerId: string;
  hostname: string;
  pid: number;
  queues: string[];
  tools: string[];
  /**
   * Tool name → the digest of its definition (`ToolDefinition`, stored once per digest under
   * `toolDefinition(digest)`). Absent from workers older than tool announcements.
   */
  toolDigests?: Record<string, string>;
  concurrency: number;
  running: number;
  /**
   * True while the worker drains after SIGTERM: it finishes its running calls and takes no
   * new ones (absent otherwise, and from workers older than this field).
   */
  draining?: boolean;
  startedAt: number;
  lastSeen: number;
}

/** How long an announcement lives without a refresh. */
export const WORKER_TTL_MS = 6000;

/**
 * How long a stored tool definition lives without a refresh: ten announcements, so a
 * definition outlives a worker that stopped long enough for every coordinator to have read it.
 */
export const TOOL_DEFINITION_TTL_MS = 10 * WORKER_TTL_MS;

/**
 * The tool definitions an announcement carries: `write` are stored (digest → definition
 * JSON), `refresh` only get their expiry renewed.
 */
export interface AnnouncedDefinitions {
  write: Map<string, string>;
  refresh: string[];
}

/**
 * Announces (or refreshes) a worker; it disappears from `listWorkers` when it stops
 * refreshing. Its tool definitions go in the same transaction, before its record, so a
 * reader that sees a digest finds its definition. Resolves with the digests of `refresh`
 * that were not in Redis any more (to be written next time).
 */
export async function announceWorker(
  redis: RedisClient,
  keys: ClusterKeys,
  info: WorkerInfo,
  definitions: AnnouncedDefinitions = { write: new Map(), refresh: [] },
): Promise<string[]> {
  const multi = redis.multi();
  for (const [digest, json] of definitions.write) {
    multi.set(keys.toolDefinition(digest), json, "PX", TOOL_DEFINITION_TTL_MS);
  }
  for (const digest of definitions.refresh) {
    multi.pexpire(keys.toolDefinition(digest), TOOL_DEFINITION_TTL_MS);
  }
  multi
    .set(keys.worker(info.workerId), JSON.stringify(info), "PX", WORKER_TTL_MS)
    .zadd(keys.workers, info.lastSeen, info.workerId);
  const replies = (await multi.exec()) ?? [];
  const refreshed = replies.slice(
    definitions.write.size,
    definitions.write.size + definitions.refresh.length,
  );
  return definitions.refresh.filter((_, i) => refreshed[i]?.[1] !== 1);
}

/** Removes a worker's announcement (clean shutdown). */
export async function withdrawWorker(
  redis: RedisClient,
  keys: ClusterKeys,
  workerId: string,
): Promise<void> {
  await redis.multi().del(keys.worker(workerId)).zrem(keys.workers, workerId).exec();
}

/** The live workers, oldest first; forgets the ones whose announcement expired. */
export async function listWorkers(redis: RedisClient, keys: ClusterKeys): Promise<WorkerInfo[]> {
  const ids = await redis.zrange(keys.workers, 0, -1);
  if (ids.length === 0) return [];
  const values = await redis.mget(ids.map((id) => keys.worker(id)));
  const dead = ids.filter((_, i) => values[i] === null);
  if (dead.length > 0) await redis.zrem(keys.workers, ...dead);
  return values.flatMap((value) => (value ? [JSON.parse(value) as WorkerInfo] : []));
}

/** The stored definitions of `digests` (digest → JSON); a digest no longer stored is left out. */
export async function readToolDefinitions(
  redis: RedisClient,
  keys: ClusterKeys,
  digests: string[],
): Promise<Map<string, string>> {
  if (digests.length === 0) return new Map();
  const values = await redis.mget(digests.map((digest) => keys.toolDefinition(digest)));
  return new Map(digests.flatMap((digest, i) => (values[i] ? [[digest, values[i]]] : [])));
}
