import type { CoordinatorRequest } from "../../protocol/coordinatorJob.js";
import { SessionStoreError } from "../../protocol/errors.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { settingsOfTenant, type Tenants } from "../../settings/tenantSettings.js";
import { SESSION_TTL_SECONDS } from "../../state/sessionStore.js";
import type { FeatureRun, HeldSession, OpenedRun, RunFeature } from "../runFeature.js";
import { type DayLedgerRequest, TenantDayLedger } from "./tenantDayLedger.js";
import { type KeptRunSlot, TenantRunSlots } from "./tenantRunSlots.js";

/** What the tenants feature is built with. */
export interface TenantsFeatureDeps {
  command: RedisClient;
  keys: ClusterKeys;
  /** Tenants' settings (`YIEM_TENANTS`): shares, budgets per day, caps on runs at once. */
  tenants?: Tenants;
  /**
   * How long a root run's place among its tenant's runs at once lives without renewal (the
   * session lease's, `YIEM_LEASE_MS`): a dead coordinator's places are free again after it.
   */
  leaseMs: number;
}

/** About how long a request held back by its tenant's cap waits before it is tried again. */
const HELD_BACK_MS = 1000;

/**
 * Tenants: a session's runs are made for the tenant its requests name (`tenant` on the job;
 * the gateway names its key's owner), recorded with the session; a child run is its tree's
 * root's tenant's. The run's model calls carry the tenant (`AgentLoopConfig.tenant`), so a
 * shared provider limit serves waiting tenants in turn; and a tenant with a `budgetPerDay`
 * reserves each model call and child start from its ledger of the day (`TenantDayLedger`)
 * first: a run that cannot reserve ends with `stopReason: "budget"`, its work so far kept. A
 * tenant with `runsAtOnce` has at most that many root runs at once on all coordinators
 * (`TenantRunSlots`): a request that would start one more waits in the queue, tried again
 * about every second (`defers`); a request to a session whose run runs, a child run and a
 * resumed run are never held back, and every root run counts while it runs.
 *
 * How it composes: listed after the budgets feature, a tree's own budget refuses first (and
 * then nothing is taken from the tenant's day); a parked run spends nothing; a Redis failure
 * stops the run before its next model call (fail closed), to be resumed.
 */
export function tenantsFeature(deps: TenantsFeatureDeps): RunFeature {
  const ledger = new TenantDayLedger(deps.command, deps.keys);
  const slots = new TenantRunSlots(deps.command, deps.keys, deps.leaseMs);
  return {
    name: "tenants",
    hold: (session) => {
      const place = new HeldPlace(deps, slots, session.sessionId);
      /** The session's own tenant, read right behind the opening of the hold's next run. */
      let opening: Promise<string | null> | undefined;
      return {
        runOpening() {
          opening = readOwnTenant(deps, session);
          opening.catch(() => undefined); // the run's read throws it
        },
        openRun: async (run) => {
          const read = opening;
          opening = undefined;
          return openTenantRun(deps, ledger, place, session, run, read);
        },
        released: () => place.release(),
      };
    },
    intake: {
      // Without a cap on any tenant's runs at once, no request is ever held back: no hook.
      ...(capsRuns(deps.tenants)
        ? { defers: (sessionId, request) => deferUnlessRoom(deps, slots, sessionId, request) }
        : {}),
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

/** Whether any tenant has a cap on its runs at once (else requests are never held back). */
function capsRuns(tenants: Tenants | undefined): boolean {
  return Object.values(tenants ?? {}).some((tenant) => tenant.runsAtOnce !== undefined);
}

/**
 * How long a root request of a capped tenant waits (about `HELD_BACK_MS`, spread so that
 * held-back requests do not come back together) when its tenant's runs at once are at their
 * cap and its session holds no place; else `undefined`, its session's place taken or renewed
 * (the run it starts keeps it). Throws when Redis fails.
 */
async function deferUnlessRoom(
  deps: TenantsFeatureDeps,
  slots: TenantRunSlots,
  sessionId: string,
  request: CoordinatorRequest,
): Promise<number | undefined> {
  if (request.parent) return undefined;
  const tenant =
    request.tenant ?? (await deps.command.get(deps.keys.sessionTenant(sessionId))) ?? undefined;
  if (tenant === undefined) return undefined;
  const cap = settingsOfTenant(deps.tenants, tenant).runsAtOnce;
  if (cap === undefined || (await slots.take(tenant, sessionId, cap))) return undefined;
  return Math.round(HELD_BACK_MS * (0.75 + Math.random() / 2));
}

/**
 * A hold's place among its tenant's root runs at once: kept from its first root run's open
 * (past the cap if need be: a run that runs counts) until the hold ends, so that the runs of
 * one hold, back to back (a follow-up after its run), keep it without a gap.
 */
class HeldPlace {
  private kept: KeptRunSlot | undefined;
  private released = false;

  constructor(
    private readonly deps: TenantsFeatureDeps,
    private readonly slots: TenantRunSlots,
    private readonly sessionId: string,
  ) {}

  /** Keeps the place while the hold lasts when tenant `tenant` has a cap. Never throws. */
  keep(tenant: string): void {
    if (this.kept || this.released) return;
    if (settingsOfTenant(this.deps.tenants, tenant).runsAtOnce === undefined) return;
    this.kept = this.slots.keep(tenant, this.sessionId);
  }

  /** Gives the place back (the hold ended). Never throws. */
  release(): void {
    this.released = true;
    this.kept?.release();
  }
}

/**
 * `ownTenant`: the session's own tenant as read right behind the script that opened the run
 * (`runOpening`), when it was: the run's tenant when the run is its tree's root.
 */
async function openTenantRun(
  deps: TenantsFeatureDeps,
  ledger: TenantDayLedger,
  place: HeldPlace,
  session: HeldSession,
  run: OpenedRun,
  ownTenant?: Promise<string | null>,
): Promise<FeatureRun> {
  let tenant: string | null | undefined; // undefined: not read yet; null: none
  let reading: Promise<string | null> | undefined; // the read under way or done; not a failed one
  let opened = ownTenant;
  const read = (): Promise<string | null> => {
    // The opening's read, once, for a root run (a child run's tenant is its root's).
    const own = opened && run.treeRoot().sessionId === session.sessionId ? opened : undefined;
    opened = undefined;
    reading ??= (own ?? readTenant(deps, session, run)).then(
      (name) => {
        tenant = name;
        return name;
      },
      (err: unknown) => {
        reading = undefined; // the next use reads again
        throw err;
      },
    );
    return reading;
  };
  const tenantOf = async (): Promise<string | undefined> => {
    if (tenant === undefined) await read();
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
    readLimits() {
      // A failure is thrown by `limitConfig`, which waits for this read.
      if (tenant === undefined) read().catch(() => undefined);
    },
    async limitConfig(config) {
      const name = await tenantOf();
      if (name !== undefined) config.tenant = name;
      if (name !== undefined && run.treeRoot().sessionId === session.sessionId) place.keep(name);
    },
    reserve: (what) => spend(what.kind, what.kind === "childRun" ? what.childSessionId : undefined),
    async afterFinish() {
      await spend("finish").catch(() => undefined); // best effort: the run is done with it
    },
  };
}

/** The session's own tenant (a root run's), its record kept as long as the session. */
async function readOwnTenant(
  deps: TenantsFeatureDeps,
  session: HeldSession,
): Promise<string | null> {
  const key = deps.keys.sessionTenant(session.sessionId);
  try {
    return await deps.command.getex(key, "EX", SESSION_TTL_SECONDS);
  } catch (err) {
    throw new SessionStoreError(session.sessionId, err);
  }
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
