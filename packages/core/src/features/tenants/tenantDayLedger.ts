import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { type ScriptedRedis, withScripts } from "../../redis/scripts.js";
import type { TenantDayBudget } from "../../settings/tenantSettings.js";
import type { RunUsage } from "../../types/index.js";
import type { Reservation } from "../runFeature.js";

/** What a run asks of its tenant's ledger of the day. */
export type DayLedgerRequest = Reservation["kind"] | "report" | "finish";

/** A run spending from its tenant's day: its session and run. */
export interface DayLedgerNode {
  sessionId: string;
  runId: string;
}

/** A day's ledger is kept two days: a run that spans midnight still reports to it. */
const DAY_LEDGER_TTL_SECONDS = 2 * 24 * 3600;

/** Each limit of a budget per day as the ledger keeps it, and how its refusal reads. */
const LIMITS: ReadonlyArray<{ key: keyof TenantDayBudget; scale: number; what: string }> = [
  { key: "maxModelCalls", scale: 1, what: "model calls" },
  { key: "maxTokens", scale: 1, what: "tokens" },
  { key: "maxCostUsd", scale: 1_000_000, what: "dollars" },
];

/** The limits of `budget` as the script takes them: their count, then name, value pairs (cost in µ$). */
function limitArgs(budget: TenantDayBudget): Array<string | number> {
  const pairs = LIMITS.flatMap(({ key, scale }) => {
    const limit = budget[key];
    return limit === undefined ? [] : [key, Math.floor(limit * scale)];
  });
  return [pairs.length / 2, ...pairs];
}

/** The day (UTC) of `at`, as the ledger's key names it: `YYYY-MM-DD`. */
export function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * A tenant's ledger of one day (UTC), shared by all its runs on every coordinator
 * (`reserveTenantDay-1.lua`): each run reserves every model call and every child start there
 * (a start reserves the child's first model call), in one script, so the tenant's runs
 * together never make more model calls in a day than its `budgetPerDay.maxModelCalls`; tokens
 * and cost are reported as each run's running totals, so they are exceeded by at most what
 * the calls in flight use. The budget is the one configured now: raising it takes effect at
 * once. A run that spans midnight spends from the new day's ledger its whole usage so far.
 */
export class TenantDayLedger {
  private readonly redis: ScriptedRedis;

  constructor(
    redis: RedisClient,
    private readonly keys: ClusterKeys,
  ) {
    this.redis = withScripts(redis);
  }

  /**
   * Reports `node`'s usage to tenant `tenant`'s ledger of today and, for a reservation, takes
   * it: the reason it is refused (a limit of `budget` the tenant has reached today), or
   * `undefined`. Throws when Redis fails.
   */
  async request(
    tenant: string,
    budget: TenantDayBudget,
    node: DayLedgerNode,
    what: DayLedgerRequest,
    usage: RunUsage,
    childSessionId?: string,
  ): Promise<string | undefined> {
    const reply = await this.redis.yiemReserveTenantDay(
      this.keys.tenantDay(tenant, dayOf(Date.now())),
      what,
      `${node.sessionId}:${node.runId}`,
      DAY_LEDGER_TTL_SECONDS,
      usage.totalTokens,
      Math.round((usage.costUsd ?? 0) * 1_000_000),
      childSessionId ?? node.sessionId,
      ...limitArgs(budget),
    );
    if (reply[0] !== "refused") return undefined;
    return describeRefusal(tenant, String(reply[1]), String(reply[2]), String(reply[3]));
  }
}

/** The text of a refusal, as a run's own budget says it (`reachedBudget`), for the tenant's day. */
function describeRefusal(tenant: string, name: string, limit: string, used: string): string {
  const found = LIMITS.find((entry) => entry.key === name);
  const value = (text: string) => Number(text) / (found?.scale ?? 1);
  return `${name} (${value(limit)} ${found?.what ?? ""} a day for tenant ${tenant}; the tenant used ${value(used)} today)`;
}
