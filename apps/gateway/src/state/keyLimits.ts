import type { YiemClient } from "@yiem/core";
import type { GatewayKey } from "../keys/gatewayKey.js";
import type { GatewayStore } from "./gatewayStore.js";

/** A run left in a key's open runs longer than this is dropped, whatever became of it. */
const OPEN_RUN_MAX_AGE_MS = 24 * 3600 * 1000;

/** The answer of a limit: go on, or wait `retryAfterS` seconds. */
export type LimitVerdict = { kind: "allowed" } | { kind: "limited"; retryAfterS: number };

/**
 * Counts one request of `key` in the current minute (a counter per key and minute in Redis,
 * shared by every gateway): past `requestsPerMinute`, `limited` until the next minute.
 */
export async function countRequest(
  store: GatewayStore,
  key: GatewayKey,
  now = Date.now(),
): Promise<LimitVerdict> {
  const window = Math.floor(now / 60_000);
  const counter = store.keys.requestCount(key.name, window);
  const replies = await store.redis.multi().incr(counter).expire(counter, 120).exec();
  const count = Number(replies?.[0]?.[1] ?? 0);
  if (count <= key.requestsPerMinute) return { kind: "allowed" };
  return {
    kind: "limited",
    retryAfterS: Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000)),
  };
}

/**
 * Admits run `runId` of `key` if it has fewer than `runsAtOnce` runs unanswered: the run is
 * added to the key's open runs, and when that makes too many, the finished ones are dropped
 * first (their status read from the cluster) and the count taken again. `limited` asks the
 * client to retry in a second. `release` takes a run back out (its send failed).
 */
export async function admitRun(
  store: GatewayStore,
  client: YiemClient,
  key: GatewayKey,
  runId: string,
  now = Date.now(),
): Promise<LimitVerdict> {
  const open = store.keys.openRuns(key.name);
  const count = async () => {
    const replies = await store.redis.multi().zadd(open, now, runId).zcard(open).exec();
    return Number(replies?.[1]?.[1] ?? 0);
  };
  if ((await count()) <= key.runsAtOnce) return { kind: "allowed" };
  await dropFinishedRuns(store, client, key.name, runId, now);
  if ((await count()) <= key.runsAtOnce) return { kind: "allowed" };
  await store.redis.zrem(open, runId);
  return { kind: "limited", retryAfterS: 1 };
}

/** Takes run `runId` back out of the open runs of key `keyName`. */
export async function releaseRun(
  store: GatewayStore,
  keyName: string,
  runId: string,
): Promise<void> {
  await store.redis.zrem(store.keys.openRuns(keyName), runId);
}

/** Drops from the open runs of `keyName` every run that is answered, failed, gone or too old. */
async function dropFinishedRuns(
  store: GatewayStore,
  client: YiemClient,
  keyName: string,
  except: string,
  now: number,
): Promise<void> {
  const open = store.keys.openRuns(keyName);
  await store.redis.zremrangebyscore(open, "-inf", now - OPEN_RUN_MAX_AGE_MS);
  const runIds = (await store.redis.zrange(open, 0, -1)).filter((id) => id !== except);
  const finished = await Promise.all(
    runIds.map(async (runId) => {
      const record = await store.readRun(runId);
      const { status } = await client.runStatus(runId, { sessionId: record?.sessionId });
      return status === "completed" || status === "failed" || status === "unknown";
    }),
  );
  const done = runIds.filter((_, i) => finished[i]);
  if (done.length > 0) await store.redis.zrem(open, ...done);
}
