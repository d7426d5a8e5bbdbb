/**
 * What the masters of a test Redis Cluster say of themselves after a load: each one's share of
 * the data commands (`INFO commandstats`, see `TestRedisCluster.commandCountsPerMaster`), the
 * slots it serves, the keys of fixed place it holds (each queue's hash tag, the worker
 * registry: where they land decides much of the spread), and its `WAIT` calls.
 */

import { clusterKeys } from "@yiem/core";
import { DEFAULT_CLUSTER_SHARDS } from "@yiem/core/internal";
import type { TestRedisCluster } from "@yiem/testing";
import { Redis } from "ioredis";

/** One master's part of the data commands. */
export interface MasterShare {
  /** `redis://127.0.0.1:PORT`. */
  master: string;
  /** The hash slots it serves (`CLUSTER NODES`), e.g. `0-5460`. */
  slots: string;
  /** The hash tags of fixed place it holds, e.g. `{coordinator}` (the sessions spread over all). */
  holds: string[];
  /** Data-command calls (`INFO commandstats`, scripts' inner commands included). */
  commands: number;
  /** `commands` ÷ every master's (0–1). */
  share: number;
}

/** How the data commands spread over the masters. */
export interface Spread {
  /** In slot order. */
  masters: MasterShare[];
  totalCommands: number;
  /** The largest master's share (0–1). */
  maxShare: number;
}

/** What one master says of itself. */
interface MasterDetails {
  slots: string;
  holds: string[];
  waitCalls: number;
}

/** A key of fixed place on a cluster and its hash tag. */
interface FixedKey {
  tag: string;
  key: string;
}

/**
 * The keys whose place does not depend on the session, as the processes name them with the
 * default layout on a cluster: the coordinator queue, each tool queue shard, the worker
 * registry.
 */
function fixedKeys(prefix: string): FixedKey[] {
  const keys = clusterKeys(prefix, { cluster: true, shards: DEFAULT_CLUSTER_SHARDS });
  const named = [keys.coordinatorQueue, ...keys.toolQueues(undefined), keys.workers];
  return named.map((key) => ({ tag: /\{[^}]*\}/.exec(key)?.[0] ?? key, key }));
}

/** Whether `slot` is in one of `ranges` (`0-5460`, or a single slot `42`). */
function inRanges(ranges: readonly string[], slot: number): boolean {
  return ranges.some((range) => {
    const [from = -1, to = from] = range.split("-").map(Number);
    return slot >= from && slot <= to;
  });
}

/** The tags of `fixed` whose slot the node behind `redis` serves (`ranges`). */
async function heldTags(redis: Redis, ranges: string[], fixed: FixedKey[]): Promise<string[]> {
  const held: string[] = [];
  for (const { tag, key } of fixed) {
    if (inRanges(ranges, Number(await redis.cluster("KEYSLOT", key)))) held.push(tag);
  }
  return held;
}

/** Reads `CLUSTER NODES` (its `myself` line), `KEYSLOT`s and `INFO commandstats` at `url`. */
async function readMasterDetails(url: string, fixed: FixedKey[]): Promise<MasterDetails> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    const nodes = String(await redis.cluster("NODES"));
    const myself = nodes.split("\n").find((line) => line.includes("myself")) ?? "";
    const ranges = myself.split(" ").slice(8);
    const stats = await redis.info("commandstats");
    return {
      slots: ranges.join(" "),
      holds: await heldTags(redis, ranges, fixed),
      waitCalls: Number(/^cmdstat_wait:calls=(\d+)/m.exec(stats)?.[1] ?? 0),
    };
  } finally {
    redis.disconnect();
  }
}

/** The first slot of a `slots` text (`0-5460 …` → 0), for ordering. */
function firstSlot(slots: string): number {
  return Number.parseInt(slots, 10) || 0;
}

/** The masters' shares of `counts` (data-command calls per master URL), in slot order. */
function spreadOf(
  counts: ReadonlyMap<string, number>,
  details: ReadonlyMap<string, MasterDetails>,
): Spread {
  const totalCommands = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const masters = [...counts]
    .map(([master, commands]) => ({
      master,
      slots: details.get(master)?.slots ?? "",
      holds: details.get(master)?.holds ?? [],
      commands,
      share: totalCommands ? commands / totalCommands : Number.NaN,
    }))
    .sort((a, b) => firstSlot(a.slots) - firstSlot(b.slots));
  return { masters, totalCommands, maxShare: Math.max(...masters.map((m) => m.share)) };
}

/**
 * The spread of the data commands since the last `resetStats()` over the live masters of
 * `cluster` (whose processes use key prefix `prefix`), and their `WAIT` calls summed.
 */
export async function readSpread(
  cluster: TestRedisCluster,
  prefix: string,
): Promise<{ spread: Spread; waitCalls: number }> {
  const counts = await cluster.commandCountsPerMaster();
  const fixed = fixedKeys(prefix);
  const urls = [...counts.keys()];
  const details = await Promise.all(urls.map((url) => readMasterDetails(url, fixed)));
  const byUrl = new Map(urls.map((url, i) => [url, details[i] as MasterDetails]));
  return {
    spread: spreadOf(counts, byUrl),
    waitCalls: details.reduce((sum, d) => sum + d.waitCalls, 0),
  };
}
