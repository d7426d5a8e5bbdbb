import type { Queue } from "bullmq";
import type { RedisClient } from "../../redis/redisConnection.js";

/**
 * Marks `queue` again (`ZADD <queue>:marker 0 "0"`, the wake-up BullMQ's add writes for one
 * worker blocked on the queue) when job `jobId` still waits untaken: no `processedOn` in its
 * hash. A wake-up can be spent without a take: a worker killed while blocked on the marker
 * stays connected for the tens of milliseconds the kernel takes to free its memory, and a
 * stopped one (SIGSTOP) for as long as it is stopped, and either may pop the marker of a call
 * added meanwhile; the live workers then sleep until the next add marks the queue, or until
 * their wait for a marker runs out (BullMQ's `drainDelay`, 5 s). One `HMGET` (its
 * `processedOn`, and `name`, which every job has); a job already taken, or gone, is left
 * alone. A job waiting for a free slot of a limited tool's queue (marked only when a slot
 * frees) gets one wake-up for nothing: one empty take. Resolves whether it marked; rejects
 * with Redis's error.
 *
 * @example await wakeIfUntaken(connection, toolQueue, "s1.r1.call_1")
 */
export async function wakeIfUntaken(
  connection: RedisClient,
  queue: Queue,
  jobId: string,
): Promise<boolean> {
  const key = queue.toKey(jobId);
  const [processedOn, name] = await connection.hmget(key, "processedOn", "name");
  if (processedOn !== null || name === null) return false;
  await connection.zadd(queue.keys.marker ?? queue.toKey("marker"), 0, "0");
  return true;
}
