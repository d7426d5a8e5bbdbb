import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";

/** What a live tool worker announces about itself. */
export interface WorkerInfo {
  workerId: string;
  hostname: string;
  pid: number;
  queues: string[];
  tools: string[];
  concurrency: number;
  running: number;
  startedAt: number;
  lastSeen: number;
}

/** How long an announcement lives without a refresh. */
export const WORKER_TTL_MS = 6000;

/** Announces (or refreshes) a worker; it disappears from `listWorkers` when it stops refreshing. */
export async function announceWorker(
  redis: RedisClient,
  keys: ClusterKeys,
  info: WorkerInfo,
): Promise<void> {
  await redis
    .multi()
    .set(keys.worker(info.workerId), JSON.stringify(info), "PX", WORKER_TTL_MS)
    .zadd(keys.workers, info.lastSeen, info.workerId)
    .exec();
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
