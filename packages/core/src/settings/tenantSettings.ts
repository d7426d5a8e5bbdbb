import type { RunBudget } from "../types/index.js";
import { ConfigError } from "./configError.js";

/** What a tenant may use in one day (UTC), all its runs together. */
export type TenantDayBudget = Pick<RunBudget, "maxTokens" | "maxCostUsd" | "maxModelCalls">;

/** One tenant's settings (`YIEM_TENANTS`). */
export interface TenantSettings {
  /**
   * Its weight when tenants' model calls wait under a shared provider limit: a tenant of share
   * 2 is served two calls for each call of a tenant of share 1 while both wait. @defaultValue 1
   */
  share?: number;
  /** What all its runs together may use in a day (UTC): reserved before each model call. */
  budgetPerDay?: TenantDayBudget;
  /**
   * How many of its root runs may run at once on all coordinators together: a request that
   * would start one more waits in the coordinator queue until one ends. Child runs belong to
   * their root's run and are not counted. @defaultValue no cap
   */
  runsAtOnce?: number;
}

/**
 * Tenants' settings by name (`YIEM_TENANTS`). The entry `"*"` holds for every tenant not named;
 * a tenant neither names has share 1, no budget per day and no cap on its runs at once.
 */
export type Tenants = Record<string, TenantSettings>;

/** The settings of any tenant the others do not name. */
export const ANY_TENANT = "*";

const FIELDS = new Set(["share", "budgetPerDay", "runsAtOnce"]);
const DAY_FIELDS = new Set(["maxTokens", "maxCostUsd", "maxModelCalls"]);

/**
 * The tenants of `YIEM_TENANTS`' JSON, checked: `undefined` when unset. Throws `ConfigError`
 * naming the variable, the tenant and the field for anything else.
 *
 * @example readTenants('{ "acme": { "share": 2, "budgetPerDay": { "maxModelCalls": 5000 } } }')
 */
export function readTenants(json: string | undefined): Tenants | undefined {
  if (json === undefined || json.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new ConfigError(`YIEM_TENANTS is not JSON: ${(err as Error).message}`);
  }
  checkTenants(value, "YIEM_TENANTS");
  return value;
}

/**
 * Checks tenants given in code or read from JSON (`readTenants`): an object of tenants by
 * name, each with a `share` above 0, a `budgetPerDay` of limits of zero or more and a
 * `runsAtOnce` that is a whole number of 1 or more. Throws
 * `ConfigError` naming `origin`, the tenant and the field.
 */
export function checkTenants(value: unknown, origin: string): asserts value is Tenants {
  if (!isRecord(value)) throw new ConfigError(`${origin} must be an object of tenants by name`);
  for (const [name, tenant] of Object.entries(value)) {
    const where = `${origin}: tenant "${name}"`;
    if (!isRecord(tenant)) throw new ConfigError(`${where} must be an object`);
    for (const [field, given] of Object.entries(tenant)) {
      if (!FIELDS.has(field)) throw new ConfigError(`${where} has an unknown field "${field}"`);
      if (field === "share" && !(typeof given === "number" && given > 0 && given < 1e6))
        throw new ConfigError(`${where}: share must be a number above 0, got ${given}`);
      if (field === "budgetPerDay") checkDayBudget(given, where);
      if (field === "runsAtOnce" && !(Number.isSafeInteger(given) && (given as number) >= 1))
        throw new ConfigError(
          `${where}: runsAtOnce must be a whole number of 1 or more, got ${given}`,
        );
    }
  }
}

function checkDayBudget(given: unknown, where: string): void {
  if (!isRecord(given)) throw new ConfigError(`${where}: budgetPerDay must be an object`);
  for (const [field, limit] of Object.entries(given)) {
    if (!DAY_FIELDS.has(field))
      throw new ConfigError(
        `${where}: budgetPerDay has an unknown limit "${field}" (known: ${[...DAY_FIELDS].join(", ")})`,
      );
    if (typeof limit !== "number" || !Number.isFinite(limit) || limit < 0)
      throw new ConfigError(`${where}: budgetPerDay.${field} must be a number of zero or more`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Tenant `name`'s settings: its own, else those of `"*"`, else none (share 1, no budget, no cap). */
export function settingsOfTenant(tenants: Tenants | undefined, name: string): TenantSettings {
  return tenants?.[name] ?? tenants?.[ANY_TENANT] ?? {};
}
