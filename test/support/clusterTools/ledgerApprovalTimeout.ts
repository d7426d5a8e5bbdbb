import type { AgentTool } from "@yiem/core";
import { ledgerTool } from "./ledger.js";

/** `ledgerApprovalTimeout`: a ledger call that waits for approval, denied on its own after 1.5 s. */
export function getTool(): AgentTool {
  return ledgerTool("ledgerApprovalTimeout", {
    parallelToolExecute: true,
    approval: "always",
    approvalTimeoutMs: 1500,
  });
}
