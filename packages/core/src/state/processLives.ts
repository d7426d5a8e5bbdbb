import { randomUUID } from "node:crypto";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { withScripts } from "../redis/scripts.js";

/**
 * The liveness of cluster processes in Redis (the `alive` and `dead` sorted sets of
 * `keys.ts`). Each start of a coordinator or worker is a life with an id of its own (a UUID):
 * its heartbeat keeps it alive (`beatAlive`), and every lock token and lease token it takes
 * names it (`holderToken`), so a coordinator that finds a life dead (`findDeadLives`) can tell
 * which locks and leases were that life's and take them over at once, instead of waiting for
 * them to run out (see `coordinator/failureDetector.ts`).
 */

/** A new life id: a process takes one at each start. */
export function newLifeId(): string {
  return randomUUID();
}

/**
 * A token naming life `lifeId`: `<prefix>:<uuid>@<lifeId>` (no `:` after the prefix), unique
 * per call. BullMQ adds `:<n>` to a worker's id to make each job's token.
 *
 * @example holderToken("c-1", life) // "c-1:6f1c…@<life>"
 */
export function holderToken(lifeId: string, prefix?: string): string {
  const own = `${randomUUID()}@${lifeId}`;
  return prefix === undefined ? own : `${prefix}:${own}`;
}

/** The life a token names (`holderToken`), or undefined for a token that names none. */
export function lifeIdOf(token: string): string | undefined {
  return /@([0-9a-f-]{36})/.exec(token)?.[1];
}

/** Renews life `lifeId` for `ttlMs` more (Redis' clock); it is no longer dead if it was. */
export async function beatAlive(
  redis: RedisClient,
  keys: ClusterKeys,
  lifeId: string,
  ttlMs: number,
): Promise<void> {
  await withScripts(redis).yiemBeatAlive(keys.alive, keys.dead, lifeId, ttlMs);
}

/** Forgets a life that ends cleanly (it holds nothing any more). */
export async function forgetLife(
  redis: RedisClient,
  keys: ClusterKeys,
  lifeId: string,
): Promise<void> {
  await redis.zrem(keys.alive, lifeId);
}

/** How long a life found dead is remembered (its tokens are recognised as dead that long). */
const KEEP_DEAD_MS = 10 * 60_000;

/** The most expired lives one look reports (the next look reports the rest). */
const MOST_AT_ONCE = 100;

/** What one look for dead lives found. */
export interface DeadLives {
  /** Lives whose heartbeat ran out, not yet buried: what they held is to be released. */
  expired: string[];
  /** Lives buried in the last ten minutes. */
  buried: string[];
}

/**
 * Whether expired lives get one more TTL instead of being reported: `all` (the caller's
 * connection to Redis came back lately: no process could beat while it was away), `ifRedisIsYoung`
 * (the caller has just started: only when Redis itself has been up for less than the TTL, as
 * after a Redis restart), `none`.
 */
export type LifeGrace = "none" | "all" | "ifRedisIsYoung";

const GRACE_ARGUMENT: Record<LifeGrace, number> = { none: 0, all: 1, ifRedisIsYoung: 2 };

/**
 * Looks for lives whose heartbeat ran out, and lists those buried lately. When `grace` applies
 * (`LifeGrace`), every expired life gets `ttlMs` to beat again instead, and none is reported
 * (`findDeadLives-2.lua`). Never reports a life whose heartbeat has not run out.
 *
 * @example const { expired } = await findDeadLives(redis, keys, 1500, "none");
 */
export async function findDeadLives(
  redis: RedisClient,
  keys: ClusterKeys,
  ttlMs: number,
  grace: LifeGrace,
): Promise<DeadLives> {
  const [expired, buried] = await withScripts(redis).yiemFindDeadLives(
    keys.alive,
    keys.dead,
    ttlMs,
    KEEP_DEAD_MS,
    MOST_AT_ONCE,
    GRACE_ARGUMENT[grace],
  );
  return { expired, buried };
}

/** Moves released lives from alive to dead (one that beat again meanwhile stays alive). */
export async function buryDeadLives(
  redis: RedisClient,
  keys: ClusterKeys,
  lifeIds: string[],
): Promise<void> {
  if (lifeIds.length === 0) return;
  await withScripts(redis).yiemBuryDeadLives(keys.alive, keys.dead, ...lifeIds);
}
