import type { ToolJobResult } from "../protocol/toolJobs.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { retryTransient } from "../redis/retryTransient.js";

/**
 * What a tool job's finished marker (`toolDone:<jobId>`, written by the worker as the job
 * completes or fails) says: the job has not finished, or it has, with the result it completed
 * with (none for a job that failed: aborted, or refused as a second run).
 */
export type ToolDone = { finished: false } | { finished: true; result?: ToolJobResult };

/** Reads a marker's stored text (`null`: no marker). A result that does not parse counts as none. */
export function parseToolDone(text: string | null): ToolDone {
  if (text === null) return { finished: false };
  if (text === "1") return { finished: true };
  try {
    return { finished: true, result: JSON.parse(text) as ToolJobResult };
  } catch {
    return { finished: true };
  }
}

/**
 * Reads the finished marker of job `jobId` of tool queue `queue`, waiting out a Redis that is briefly away
 * (`retryTransient`); rejects when it stays away.
 */
export async function readToolDone(
  redis: RedisClient,
  keys: ClusterKeys,
  queue: string,
  jobId: string,
): Promise<ToolDone> {
  return parseToolDone(await retryTransient(() => redis.get(keys.toolDone(queue, jobId))));
}
