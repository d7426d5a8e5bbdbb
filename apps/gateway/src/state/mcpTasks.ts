import type { GatewayStore } from "./gatewayStore.js";

/** How long a task stays listed: a day, as its run's record. */
const TASK_LIST_TTL_MS = 24 * 3600 * 1000;

/** A page of a key's MCP tasks: their run ids, newest first, and where the next page starts. */
export interface McpTaskPage {
  runIds: string[];
  /** The last id of this page, when more follow: the next page starts after it. */
  nextCursor?: string;
}

/** Why a page could not be read: the cursor names no task of the key (or one no longer listed). */
export class McpTaskCursorError extends Error {
  constructor(readonly cursor: string) {
    super(`unknown or expired cursor ${JSON.stringify(cursor.slice(0, 80))}: list from the start`);
    this.name = "McpTaskCursorError";
  }
}

/**
 * Lists run `runId` as an MCP task of gateway key `keyName` (made now); tasks older than a
 * day leave the list, which is kept a day after its last task.
 */
export async function recordMcpTask(
  store: GatewayStore,
  keyName: string,
  runId: string,
  now = Date.now(),
): Promise<void> {
  const key = store.keys.mcpTasks(keyName);
  await store.redis
    .multi()
    .zadd(key, now, runId)
    .zremrangebyscore(key, "-inf", now - TASK_LIST_TTL_MS)
    .pexpire(key, TASK_LIST_TTL_MS)
    .exec();
}

/**
 * Up to `limit` of key `keyName`'s MCP tasks, newest first, after the task `cursor` names
 * (the `nextCursor` of the page before; absent: from the newest). A task made while a client
 * pages lands before its first page, so a page's cursor stays good until its task leaves the
 * list (a day). An unknown cursor throws `McpTaskCursorError`.
 */
export async function listMcpTasks(
  store: GatewayStore,
  keyName: string,
  limit: number,
  cursor?: string,
): Promise<McpTaskPage> {
  const key = store.keys.mcpTasks(keyName);
  const from = cursor === undefined ? 0 : await startAfter(store, key, cursor);
  const runIds = await store.redis.zrevrange(key, from, from + limit);
  if (runIds.length <= limit) return { runIds };
  const page = runIds.slice(0, limit);
  return { runIds: page, nextCursor: page.at(-1) };
}

async function startAfter(store: GatewayStore, key: string, cursor: string): Promise<number> {
  const rank = await store.redis.zrevrank(key, cursor);
  if (rank === null) throw new McpTaskCursorError(cursor);
  return rank + 1;
}
