import type { AgentTool } from "../types/index.js";

/** True when the tool declares a cluster-wide `concurrency` or `rateLimit`. */
export function isLimitedTool(tool: AgentTool): boolean {
  return tool.concurrency !== undefined || tool.rateLimit !== undefined;
}

/**
 * The tool queue a tool's calls go to: its own `queue`, else `tool.<name>` for a limited tool
 * (so its limit is its own), else `undefined` (the default queue; calls of sequential
 * batches then run in the coordinator).
 *
 * @example remoteQueueOf({ name: "search", concurrency: 3, … }) // "tool.search"
 */
export function remoteQueueOf(tool: AgentTool): string | undefined {
  if (tool.queue) return tool.queue;
  return isLimitedTool(tool) ? `tool.${tool.name}` : undefined;
}

/** The limited tools of a store, by their queue name. */
export function limitedToolQueues(tools: Iterable<AgentTool>): Map<string, AgentTool> {
  const byQueue = new Map<string, AgentTool>();
  for (const tool of tools) {
    const queue = remoteQueueOf(tool);
    if (queue && isLimitedTool(tool)) byQueue.set(queue, tool);
  }
  return byQueue;
}
