import type { AgentTool } from "@yiem/core";
import { ledgerTool } from "./ledger.js";

/** `ledgerNoRetry`: a remote ledger call that is never retried after its worker dies. */
export function getTool(): AgentTool {
  return ledgerTool("ledgerNoRetry", { parallelToolExecute: true, retries: 0 });
}
