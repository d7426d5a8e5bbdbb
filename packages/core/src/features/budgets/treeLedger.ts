import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { type ScriptedRedis, withScripts } from "../../redis/scripts.js";
import { SESSION_TTL_SECONDS } from "../../state/sessionStore.js";
import type { RunBudget, RunUsage } from "../../types/index.js";
import type { Reservation, TreeRoot } from "../runFeature.js";

/** What a node of a tree asks of its tree's ledger. */
export type LedgerRequest = Reservation["kind"] | "report";

/** A node of a tree: the session and run that spend from the ledger. */
export interface LedgerNode {
  sessionId: string;
  runId: string;
}

/** Each budget limit as the ledger keeps it, and how its refusal reads. */
const LIMITS: ReadonlyArray<{ key: keyof RunBudget; scale: number; what: string }> = [
  { key: "maxModelCalls", scale: 1, what: "model calls" },
  { key: "maxTokens", scale: 1, what: "tokens" },
  { key: "maxToolCalls", scale: 1, what: "tool calls" },
  { key: "maxCostUsd", scale: 1_000_000, what: "dollars" },
];

/** The limits of `budget` as the script takes them: name, value pairs (cost in µ$). */
function limitArgs(budget: RunBudget | undefined): Array<string | number> {
  if (!budget) return [0];
  const pairs = LIMITS.flatMap(({ key, scale }) => {
    const limit = budget[key];
    return limit === undefined ? [] : [key, Math.floor(limit * scale)];
  });
  return [pairs.length / 2, ...pairs];
}

/** The text of a refusal, as a run's own budget says it (`reachedBudget`), for the whole tree. */
function describeRefusal(name: string, limit: string, used: string): string {
  const found = LIMITS.find((entry) => entry.key === name);
  const scale = found?.scale ?? 1;
  const value = (text: string) => Number(text) / scale;
  return `${name} (${value(limit)} ${found?.what ?? ""} for the tree of agents; the tree used ${value(used)})`;
}

/**
 * The one ledger of a tree of agents, at its root: the root run's budget, which every node
 * (the root and each child run, at any depth) reserves from before each model call and each
 * child start (which reserves the child's first model call), in one script, so siblings cannot
 * jointly exceed it. Model calls are reserved
 * before they are made; tokens, tool calls and cost are reported as each node's running
 * totals, so a tree exceeds those limits by at most what its calls in flight use.
 */
export class TreeLedger {
  private readonly redis: ScriptedRedis;

  constructor(
    redis: RedisClient,
    private readonly keys: ClusterKeys,
  ) {
    this.redis = withScripts(redis);
  }

  /**
   * Reports `node`'s usage and, for a reservation, takes it: the reason it is refused (a
   * limit the tree has reached), or `undefined`. A child's start reserves the child's first
   * model call (`childSessionId`), which the child then spends without reserving again.
   * `limits` is the root's budget (the root sends it; a limit is only ever lowered). Throws
   * when Redis fails.
   */
  async request(
    root: TreeRoot,
    node: LedgerNode,
    what: LedgerRequest,
    usage: RunUsage,
    options: { limits?: RunBudget; childSessionId?: string } = {},
  ): Promise<string | undefined> {
    const reply = await this.redis.yiemReserveBudget(
      this.keys.treeLedger(root.sessionId, root.runId),
      what,
      `${node.sessionId}:${node.runId}`,
      SESSION_TTL_SECONDS,
      usage.totalTokens,
      usage.toolCalls,
      Math.round((usage.costUsd ?? 0) * 1_000_000),
      options.childSessionId ?? node.sessionId,
      ...limitArgs(options.limits),
    );
    if (reply[0] !== "refused") return undefined;
    return describeRefusal(String(reply[1]), String(reply[2]), String(reply[3]));
  }
}
