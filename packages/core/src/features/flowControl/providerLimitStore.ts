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
  /** The tokens it reserved. */
  tokens: number;
  /** Ms until its turn (Redis' clock). */
  turnInMs: number;
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
  /** How many calls wait for a turn still to come. */
  waitingCount: number;
  /** The first of them (at most `WAITING_CALLS_LISTED`), earliest turn first. */
  waiting: WaitingModelCall[];
}

/**
 * Reads every shared provider limit the coordinators announced (`keys.modelLimits`) and what
 * each holds now in Redis: its 429 pause, the requests and tokens of its last window, and the
 * calls waiting for their turn with who waits (coordinator and agent) and for how long still.
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
  const { calls, tokens, pausedUntil } = keys.modelLimit(limit.name);
  const [recent, waitingCount, first, paused] = await Promise.all([
    redis.zrangebyscore(calls, now - limit.windowMs, now),
    redis.zcount(calls, `(${now}`, "+inf"),
    redis.zrangebyscore(calls, `(${now}`, "+inf", "WITHSCORES", "LIMIT", 0, WAITING_CALLS_LISTED),
    redis.get(pausedUntil),
  ]);
  const waitingIds = first.filter((_, i) => i % 2 === 0);
  const ids = [...recent, ...waitingIds];
  const amounts = ids.length > 0 ? await redis.hmget(tokens, ...ids) : [];
  const tokensOf = (i: number) => Number(amounts[i] ?? 0);
  const waiting = waitingIds.map((callId, i) => ({
    callId,
    ...parseModelCallId(callId),
    tokens: tokensOf(recent.length + i),
    turnInMs: Number(first[2 * i + 1]) - now,
  }));
  return {
    limit,
    pausedForMs: Math.max(0, Number(paused ?? 0) - now),
    recentRequests: recent.length,
    recentTokens: recent.reduce((sum, _, i) => sum + tokensOf(i), 0),
    waitingCount,
    waiting,
  };
}
