import type { AgentTool } from "@yiem/core";
import { ledgerTool } from "./ledger.js";

/** `ledgerLocalIdempotent`: like `ledgerLocal`, but safe to run again after a crash. */
export function getTool(): AgentTool {
  return ledgerTool("ledgerLocalIdempotent", { parallelToolExecute: false, idempotent: true });
}
