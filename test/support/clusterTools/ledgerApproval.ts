import type { AgentTool } from "@yiem/core";
import { ledgerTool } from "./ledger.js";

/** `ledgerApproval`: a remote ledger call that always waits for a human decision first. */
export function getTool(): AgentTool {
  return ledgerTool("ledgerApproval", { parallelToolExecute: true, approval: "always" });
}
