import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { RunBudget } from "../../types/index.js";

/**
 * The own budgets of the inputs `requestIds` of a session, as recorded with them
 * (`enqueueInput-8.lua`): one for each input whose request carried a `budget`, in no
 * particular order. The run answering those inputs lowers its budget by every one, so a
 * resumed run (another coordinator, after a crash) applies the same limits. A stored value
 * that is not a JSON object is left out (intake validated it; nothing else writes there).
 *
 * @example const budgets = await readInputBudgets(redis, keys, "s-1", ["7", "8"]) // [{ maxModelCalls: 1 }]
 */
export async function readInputBudgets(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionId: string,
  requestIds: readonly string[],
): Promise<RunBudget[]> {
  if (requestIds.length === 0) return [];
  const stored = await redis.hmget(keys.inputBudgets(sessionId), ...requestIds);
  return stored.flatMap((json) => parseInputBudget(json ?? undefined));
}

/**
 * Every input budget the session keeps, by input id: the budgets of its inputs not answered
 * yet (a run's close forgets those of the inputs it answered), so a few at most. Read right
 * behind the script that opens a run, it holds the budget of every input that run took in.
 */
export async function readAllInputBudgets(
  redis: RedisClient,
  keys: ClusterKeys,
  sessionId: string,
): Promise<Map<string, string>> {
  return new Map(Object.entries(await redis.hgetall(keys.inputBudgets(sessionId))));
}

/** A stored budget as a list of none or one (`json` not a JSON object, or none: none). */
export function parseInputBudget(json: string | undefined): RunBudget[] {
  if (!json) return [];
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "object" && value !== null ? [value as RunBudget] : [];
  } catch {
    return [];
  }
}
