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

/** How many beats a life's ttl spans: one or two late beats do not make it look dead. */
const BEATS_PER_TTL = 5;

/** How often a life with time-to-live `ttlMs` beats. */
export function beatEveryMs(ttlMs: number): number {
  return Math.max(20, Math.floor(ttlMs / BEATS_PER_TTL));
}

/**
 * How overdue a watched life's beat is before a look asks whether it is still connected: a
 * beat and a quarter. A late beat alone never makes a life dead (a live process, however slow
 * its beats, still holds its subscription); the quarter keeps a beat that is only a little late
 * from costing a question. A process whose connections all dropped and came back within that
 * (a reconnect) subscribed again already; one cut off longer is fenced (docs/RELIABILITY.md).
 */
export function lateAfterMs(ttlMs: number): number {
  const beat = beatEveryMs(ttlMs);
  return beat + Math.ceil(beat / 4);
}

/**
 * Renews life `lifeId` for `ttlMs` more (Redis' clock); it is no longer dead if it was. The
 * beat also records whether Redis holds a subscriber of the life's channel (`keys.lifeChannel`,
 * the process's own, `startAliveBeat`): the life is `watched` exactly while it does
 * (`beatAlive-3.lua`).
 */
export async function beatAlive(
  redis: RedisClient,
  keys: ClusterKeys,
  lifeId: string,
  ttlMs: number,
): Promise<void> {
  await withScripts(redis).yiemBeatAlive(
    keys.alive,
    keys.dead,
    keys.watched,
    lifeId,
    ttlMs,
    keys.lifeChannel(lifeId),
  );
}

/** Forgets a life that ends cleanly (it holds nothing any more). */
export async function forgetLife(
  redis: RedisClient,
  keys: ClusterKeys,
  lifeId: string,
): Promise<void> {
  await Promise.all([redis.zrem(keys.alive, lifeId), redis.srem(keys.watched, lifeId)]);
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
 * Looks for lives whose heartbeat ran out, or whose beats are `lateAfterMs` overdue while
 * Redis holds no subscription of theirs though they are `watched` (the process's sockets
 * closed: it died), and lists those buried lately. When `grace` applies (`LifeGrace`), every
 * expired life gets `ttlMs` to beat again instead, and none is reported
 * (`findDeadLives-3.lua`). Never reports a life that beats on time, nor one still subscribed
 * whose heartbeat has not run out.
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
    keys.watched,
    ttlMs,
    KEEP_DEAD_MS,
    MOST_AT_ONCE,
    GRACE_ARGUMENT[grace],
    lateAfterMs(ttlMs),
    keys.lifeChannel(""),
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
  await withScripts(redis).yiemBuryDeadLives(keys.alive, keys.dead, keys.watched, ...lifeIds);
}
