/** What a key may do: start runs and abort them, read, decide approvals, or everything. */
export type Scope = "submit" | "read" | "approve" | "admin";

/** Every scope, in the order the keys file and the docs list them. */
export const SCOPES: readonly Scope[] = ["submit", "read", "approve", "admin"];

/** A key of the keys file, as the gateway uses it (never the key itself: only its hash). */
export interface GatewayKey {
  /** Its name: the owner of the sessions it starts, and the `by` of its decisions. */
  name: string;
  hash: string;
  scopes: ReadonlySet<Scope>;
  /** The agents it may run; `"*"` is every agent. */
  agents: readonly string[];
  /** Which sessions it sees: the ones it started (`own`), or every one (`all`). */
  sessions: "own" | "all";
  /** Requests it may make per minute. */
  requestsPerMinute: number;
  /** Runs it may have unanswered at once. */
  runsAtOnce: number;
}

/** True when `key` has `scope` (`admin` has every scope). */
export function hasScope(key: GatewayKey, scope: Scope): boolean {
  return key.scopes.has(scope) || key.scopes.has("admin");
}

/** True when `key` may run agent `agent`. */
export function mayUseAgent(key: GatewayKey, agent: string): boolean {
  return key.agents.includes("*") || key.agents.includes(agent);
}

/** True when `key` sees every session (`sessions: "all"`, or the `admin` scope). */
export function seesAllSessions(key: GatewayKey): boolean {
  return key.sessions === "all" || key.scopes.has("admin");
}

/**
 * The key every request acts as when the gateway runs without a keys file (loopback only):
 * every scope, every agent, every session.
 */
export function localKey(): GatewayKey {
  return {
    name: "local",
    hash: "",
    scopes: new Set(SCOPES),
    agents: ["*"],
    sessions: "all",
    requestsPerMinute: Number.MAX_SAFE_INTEGER,
    runsAtOnce: Number.MAX_SAFE_INTEGER,
  };
}
