import { SessionStoreError } from "../../protocol/errors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { settingsOfTenant, type Tenants } from "../../settings/tenantSettings.js";
import { SESSION_TTL_SECONDS } from "../../state/sessionStore.js";
import type { FeatureRun, HeldSession, OpenedRun, RunFeature } from "../runFeature.js";
import { type DayLedgerRequest, TenantDayLedger } from "./tenantDayLedger.js";

/** What the tenants feature is built with. */
export interface TenantsFeatureDeps {
  command: RedisClient;
  keys: ClusterKeys;
  /** Tenants' settings (`YIEM_TENANTS`): shares and budgets per day. */
  tenants?: Tenants;
}

/**
 * Tenants: a session's runs are made for the tenant its requests name (`tenant` on the job;
 * the gateway names its key's owner), recorded with the session; a child run is its tree's
 * root's tenant's. The run's model calls carry the tenant (`AgentLoopConfig.tenant`), so a
 * shared provider limit serves waiting tenants in turn; and a tenant with a `budgetPerDay`
 * reserves each model call and child start from its ledger of the day (`TenantDayLedger`)
 * first: a run that cannot reserve ends with `stopReason: "budget"`, its work so far kept.
 *
 * How it composes: listed after the budgets feature, a tree's own budget refuses first (and
 * then nothing is taken from the tenant's day); a parked run spends nothing; a Redis failure
 * stops the run before its next model call (fail closed), to be resumed.
 */
export function tenantsFeature(deps: TenantsFeatureDeps): RunFeature {
  const ledger = new TenantDayLedger(deps.command, deps.keys);
  return {
    name: "tenants",
    hold: (session) => ({ openRun: async (run) => openTenantRun(deps, ledger, session, run) }),
    intake: {
      taken(data, delivery) {
        if (delivery.first && delivery.priority > 0) leaveTenantLine(deps, data);
      },
      async beforeRecord(sessionId, request) {
        if (request.tenant === undefined) return;
        const key = deps.keys.sessionTenant(sessionId);
        await deps.command.set(key, request.tenant, "EX", SESSION_TTL_SECONDS);
      },
    },
  };
}

/**
 * A request its client lined up (`YiemClientOptions.tenantLine`: its priority is how many of
 * its tenant's requests waited) left the queue: its tenant has one less waiting. Not awaited;
 * a failure only leaves the tenant's next requests a place further back, until the count
 * expires.
 */
function leaveTenantLine(deps: TenantsFeatureDeps, data: unknown): void {
  const tenant = (data as { tenant?: unknown } | null)?.tenant;
  if (typeof tenant !== "string") return;
  const key = deps.keys.tenantQueued(tenant);
  void deps.command
    .decr(key)
    .then((left) => (left < 0 ? deps.command.set(key, "0", "KEEPTTL") : undefined))
    .catch(() => undefined);
}

async function openTenantRun(
  deps: TenantsFeatureDeps,
  ledger: TenantDayLedger,
  session: HeldSession,
  run: OpenedRun,
): Promise<FeatureRun> {
  let tenant: string | null | undefined; // undefined: not read yet; null: none
  const tenantOf = async (): Promise<string | undefined> => {
    if (tenant === undefined) tenant = await readTenant(deps, session, run);
    return tenant ?? undefined;
  };
  const spend = async (what: DayLedgerRequest, childSessionId?: string) => {
    const name = await tenantOf();
    const budget =
      name === undefined ? undefined : settingsOfTenant(deps.tenants, name).budgetPerDay;
    if (name === undefined || !budget) return undefined;
    const node = { sessionId: session.sessionId, runId: run.runId };
    try {
      return await ledger.request(name, budget, node, what, run.usage(), childSessionId);
    } catch (err) {
      throw new SessionStoreError(session.sessionId, err);
    }
  };
  return {
    async limitConfig(config) {
      const name = await tenantOf();
      if (name !== undefined) config.tenant = name;
    },
    reserve: (what) => spend(what.kind, what.kind === "childRun" ? what.childSessionId : undefined),
    async afterFinish() {
      await spend("finish").catch(() => undefined); // best effort: the run is done with it
    },
  };
}

/** The tenant of the run's tree (its root session's), its record kept as long as the session. */
async function readTenant(
  deps: TenantsFeatureDeps,
  session: HeldSession,
  run: OpenedRun,
): Promise<string | null> {
  const key = deps.keys.sessionTenant(run.treeRoot().sessionId);
  try {
    return await deps.command.getex(key, "EX", SESSION_TTL_SECONDS);
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
}
