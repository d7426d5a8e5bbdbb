import type { AgentTool } from "@yiem/core";
import { ledgerTool } from "./ledger.js";

/** `ledgerLocal`: a ledger call in sequential batches (runs in the coordinator), not idempotent. */
export function getTool(): AgentTool {
  return ledgerTool("ledgerLocal", { parallelToolExecute: false, idempotent: false });
}
