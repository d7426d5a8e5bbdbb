import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { parseModelCallId } from "./modelCallIds.js";
import type { ResolvedModelLimit } from "./modelLimits.js";

export type { ResolvedModelLimit };

/** The most waiting calls a read lists per limit (the count is always whole). */
export const WAITING_CALLS_LISTED = 100;

/** One model call waiting for its turn under a shared provider limit. */
export interface WaitingModelCall {
  /** Its id in Redis. */
  callId: string;
  /** The coordinator waiting, when the id names it (`modelCallId`). */
  coordinatorId?: string;
  /** The agent whose call it is, when the id names it. */
  agent?: string;
  /** The tokens it asks for. */
  tokens: number;
  /** Its place in the line (0: the next call admitted once the limit has room). */
  place: number;
}

/** A shared provider limit as Redis holds it now, across every coordinator. */
export interface ProviderLimitState {
  /** The limit as the coordinators announced it (`YIEM_MODEL_LIMITS`, resolved). */
  limit: ResolvedModelLimit;
  /** Ms until the pause a 429 set ends; 0 when none holds. */
  pausedForMs: number;
  /** Requests whose turn came within the last window (the margin included). */
  recentRequests: number;
  /** Their tokens: reported usage, else the reservation. */
  recentTokens: number;
  /** How many calls wait in the limit's line. */
  waitingCount: number;
  /** The first of them (at most `WAITING_CALLS_LISTED`), in line order (fairest first). */
  waiting: WaitingModelCall[];
}

/**
 * Reads every shared provider limit the coordinators announced (`keys.modelLimits`) and what
 * each holds now in Redis: its 429 pause, the requests and tokens of its last window, and the
 * calls waiting in its fair line with who waits (coordinator and agent) and their place.
 * Plain reads (no script), a few commands per limit; sorted by the limit's name. Reads
 * Redis, never a coordinator's memory: the same from any process.
 *
 * @example const limits = await readProviderLimits(redis, clusterKeys("yiem"));
 */
export async function readProviderLimits(
  redis: RedisClient,
  keys: ClusterKeys,
): Promise<ProviderLimitState[]> {
  const announced = await redis.hgetall(keys.modelLimits);
  const limits = Object.values(announced)
    .map((json) => JSON.parse(json) as ResolvedModelLimit)
    .sort((a, b) => a.name.localeCompare(b.name));
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  return Promise.all(limits.map((limit) => readOneLimit(redis, keys, limit, now)));
}

async function readOneLimit(
  redis: RedisClient,
  keys: ClusterKeys,
  limit: ResolvedModelLimit,
  now: number,
): Promise<ProviderLimitState> {
  const { calls, tokens, pausedUntil, waiting: line, wants } = keys.modelLimit(limit.name);
  const [recent, waitingCount, waitingIds, paused] = await Promise.all([
    redis.zrangebyscore(calls, now - limit.windowMs, now),
    redis.zcard(line),
    redis.zrange(line, 0, WAITING_CALLS_LISTED - 1),
    redis.get(pausedUntil),
  ]);
  const [sent, asked] = await Promise.all([
    recent.length > 0 ? redis.hmget(tokens, ...recent) : [],
    waitingIds.length > 0 ? redis.hmget(wants, ...waitingIds) : [],
  ]);
  const waiting = waitingIds.map((callId, place) => ({
    callId,
    ...parseModelCallId(callId),
    tokens: Number(asked[place] ?? 0),
    place,
  }));
  return {
    limit,
    pausedForMs: Math.max(0, Number(paused ?? 0) - now),
    recentRequests: recent.length,
    recentTokens: sent.reduce((sum: number, amount) => sum + Number(amount ?? 0), 0),
    waitingCount,
    waiting,
  };
}
