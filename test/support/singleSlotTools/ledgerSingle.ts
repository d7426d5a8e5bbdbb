import type { AgentTool } from "@yiem/core";
import { ledgerTool } from "../clusterTools/ledger.js";

/**
 * `ledgerSingle`: a ledger call of a tool limited to one call at once across the cluster (no
 * retries). In a folder of its own, so the clusters of other tests do not get a third limited
 * tool.
 */
export function getTool(): AgentTool {
  return ledgerTool("ledgerSingle", { parallelToolExecute: true, concurrency: 1 });
}
