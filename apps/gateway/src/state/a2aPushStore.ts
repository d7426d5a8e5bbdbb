import type { GatewayStore } from "./gatewayStore.js";

/** How long a task's push configs are kept: a day, as its run's record. */
const CONFIG_TTL_S = 24 * 3600;

/** Most push configs one task may have. */
export const MAX_PUSH_CONFIGS = 10;

/** One A2A push notification config of a task, as the gateway keeps it. */
export interface StoredPushConfig {
  id: string;
  taskId: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials: string };
  /** The gateway key that set it. */
  owner: string;
}

/**
 * Saves `config` for its task (replacing one of the same id) and puts the task in the line of
 * deliveries, due now; kept a day. Returns `full` when the task has `MAX_PUSH_CONFIGS` others.
 */
export async function savePushConfig(
  store: GatewayStore,
  config: StoredPushConfig,
): Promise<"saved" | "full"> {
  const key = store.keys.a2aPushConfigs(config.taskId);
  const ids = await store.redis.hkeys(key);
  if (!ids.includes(config.id) && ids.length >= MAX_PUSH_CONFIGS) return "full";
  const sent = store.keys.a2aPushSent(config.taskId);
  await store.redis
    .multi()
    .hset(key, config.id, JSON.stringify(config))
    .hdel(sent, config.id)
    .expire(key, CONFIG_TTL_S)
    .expire(sent, CONFIG_TTL_S)
    .exec();
  await store.redis.zadd(store.keys.a2aPushDue, Date.now(), config.taskId);
  return "saved";
}

/** The push configs of task `taskId`, by id order. */
export async function listPushConfigs(
  store: GatewayStore,
  taskId: string,
): Promise<StoredPushConfig[]> {
  const all = await store.redis.hgetall(store.keys.a2aPushConfigs(taskId));
  return Object.keys(all)
    .sort()
    .flatMap((id) => {
      try {
        return [JSON.parse(all[id] ?? "") as StoredPushConfig];
      } catch {
        return [];
      }
    });
}

/** Deletes config `id` of task `taskId`; whether it was there. */
export async function deletePushConfig(
  store: GatewayStore,
  taskId: string,
  id: string,
): Promise<boolean> {
  const [[, removed] = [null, 0]] =
    (await store.redis
      .multi()
      .hdel(store.keys.a2aPushConfigs(taskId), id)
      .hdel(store.keys.a2aPushSent(taskId), id)
      .exec()) ?? [];
  return Number(removed) > 0;
}

/** What was last delivered to each config of task `taskId` (config id → mark). */
export async function readPushSent(
  store: GatewayStore,
  taskId: string,
): Promise<Record<string, string>> {
  return store.redis.hgetall(store.keys.a2aPushSent(taskId));
}

/** Records that `mark` was delivered to config `id` of task `taskId`. */
export async function markPushSent(
  store: GatewayStore,
  taskId: string,
  id: string,
  mark: string,
): Promise<void> {
  await store.redis.hset(store.keys.a2aPushSent(taskId), id, mark);
}

/** Up to `limit` tasks whose delivery is due by `now`. */
export async function duePushTasks(
  store: GatewayStore,
  limit: number,
  now = Date.now(),
): Promise<string[]> {
  return store.redis.zrangebyscore(store.keys.a2aPushDue, "-inf", now, "LIMIT", 0, limit);
}

/** Puts task `taskId`'s next delivery at `at` (epoch ms), or takes it out of the line (`done`). */
export async function schedulePushTask(
  store: GatewayStore,
  taskId: string,
  at: number | "done",
): Promise<void> {
  if (at === "done") await store.redis.zrem(store.keys.a2aPushDue, taskId);
  else await store.redis.zadd(store.keys.a2aPushDue, at, taskId);
}

/**
 * Claims the delivery of task `taskId` for `holder` for `leaseMs` (a lease in Redis: one
 * gateway delivers a task at a time; a gateway that dies lets it lapse, and another claims it).
 */
export async function claimPushTask(
  store: GatewayStore,
  taskId: string,
  holder: string,
  leaseMs: number,
): Promise<boolean> {
  const set = await store.redis.set(store.keys.a2aPushLease(taskId), holder, "PX", leaseMs, "NX");
  return set === "OK";
}

/** Gives back the lease of `holder` on task `taskId` (a lease another holds is left alone). */
export async function releasePushTask(
  store: GatewayStore,
  taskId: string,
  holder: string,
): Promise<void> {
  const key = store.keys.a2aPushLease(taskId);
  await store.redis.eval(
    'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0',
    1,
    key,
    holder,
  );
}
