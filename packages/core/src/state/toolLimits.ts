import { Queue } from "bullmq";
import type { Logger } from "../ops/logger.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import type { AgentTool } from "../types/index.js";

/**
 * The tool queue a tool's limits live on when it has any: its own `queue`, else
 * `tool.<name>` (the queue `remoteQueueOf` gives a limited tool).
 */
export function limitQueueOf(tool: AgentTool): string {
  return tool.queue ?? `tool.${tool.name}`;
}

/** A rate limit as BullMQ stores it. */
interface RateLimit {
  max: number;
  durationMs: number;
}

/** What the tools of one tool queue declare; the last tool declaring a limit wins. */
interface DeclaredLimits {
  /** The tools of the queue, for the logs. */
  tools: string[];
  concurrency?: { tool: string; value: number };
  rateLimit?: { tool: string; value: RateLimit };
}

/** What is needed to bring the limits stored in Redis in line with a process's tools. */
export interface ToolLimitsSync {
  connection: RedisClient;
  keys: ClusterKeys;
  /** The tools this process speaks for (see `syncToolLimits`). */
  tools: Iterable<AgentTool>;
  log: Logger;
}

/** The warning logged when a queue's stored limit is not the one this process declares. */
export const LIMITS_DIFFER =
  "tool limit in Redis differs from this process's; setting this process's";

/** The line logged when a limit no tool of the queue declares any more is removed. */
export const LIMIT_CLEARED = "cleared a tool limit that no tool of its queue declares";

/** Groups tools by the tool queue their limits live on, with the limits they declare. */
function declaredLimitsByQueue(tools: Iterable<AgentTool>): Map<string, DeclaredLimits> {
  const byQueue = new Map<string, DeclaredLimits>();
  for (const tool of tools) {
    const queue = limitQueueOf(tool);
    const declared = byQueue.get(queue) ?? { tools: [] };
    declared.tools.push(tool.name);
    if (tool.concurrency !== undefined) {
      declared.concurrency = { tool: tool.name, value: tool.concurrency };
    }
    if (tool.rateLimit) declared.rateLimit = { tool: tool.name, value: { ...tool.rateLimit } };
    byQueue.set(queue, declared);
  }
  return byQueue;
}

/** Sets or clears the global concurrency of `queue` as `declared` says; warns on a disagreement. */
async function syncConcurrency(queue: Queue, declared: DeclaredLimits, log: Logger) {
  const stored = await queue.getGlobalConcurrency();
  const own = declared.concurrency;
  if (!own) {
    if (stored === null) return;
    await queue.removeGlobalConcurrency();
    log.info(
      { tools: declared.tools, queue: queue.name, limit: "concurrency", stored },
      LIMIT_CLEARED,
    );
    return;
  }
  if (stored === own.value) return;
  if (stored !== null) {
    const where = { tool: own.tool, queue: queue.name, limit: "concurrency" };
    log.warn({ ...where, stored, declared: own.value }, LIMITS_DIFFER);
  }
  await queue.setGlobalConcurrency(own.value);
}

/** Sets or clears the global rate limit of `queue` as `declared` says; warns on a disagreement. */
async function syncRateLimit(queue: Queue, declared: DeclaredLimits, log: Logger) {
  const found = await queue.getGlobalRateLimit();
  const stored = found && { max: found.max, durationMs: found.duration };
  const own = declared.rateLimit;
  if (!own) {
    if (!stored) return;
    await queue.removeGlobalRateLimit();
    log.info(
      { tools: declared.tools, queue: queue.name, limit: "rateLimit", stored },
      LIMIT_CLEARED,
    );
    return;
  }
  if (stored?.max === own.value.max && stored.durationMs === own.value.durationMs) return;
  if (stored) {
    const where = { tool: own.tool, queue: queue.name, limit: "rateLimit" };
    log.warn({ ...where, stored, declared: own.value }, LIMITS_DIFFER);
  }
  await queue.setGlobalRateLimit(own.value.max, own.value.durationMs);
}

/**
 * Makes the cluster-wide limits stored on each tool queue of `tools` (BullMQ's global
 * concurrency and rate limit, in the queue's meta) what those tools declare, at a process's
 * start. A stored limit that differs from the declared one is logged as a warning (tool,
 * queue, both values: processes disagree, and the last to start wins), then replaced; a
 * stored limit that no tool of the queue declares any more (a `concurrency` or `rateLimit`
 * removed from the tool) is removed. `tools` must be the tools this process speaks for: a
 * coordinator all of its own, a worker those of the queues it serves. Limits are on one
 * BullMQ queue per tool queue (`toolQueueFor(queue, "")`): a limited tool's own queue
 * (`tool.<name>`) is never sharded.
 */
export async function syncToolLimits(sync: ToolLimitsSync): Promise<void> {
  for (const [toolQueue, declared] of declaredLimitsByQueue(sync.tools)) {
    const queue = new Queue(sync.keys.toolQueueFor(toolQueue, ""), {
      connection: sync.connection,
      prefix: sync.keys.bullPrefix,
    });
    try {
      await syncConcurrency(queue, declared, sync.log);
      await syncRateLimit(queue, declared, sync.log);
    } finally {
      await queue.close();
    }
  }
}
