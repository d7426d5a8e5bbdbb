// `chaosApproval`: a remote call that waits for a person's decision (the soak's approver): at
// most once when approved, never when denied.
import { chaosTool } from "../ledgerTool.mjs";

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return chaosTool("chaosApproval", { parallelToolExecute: true, retries: 0, approval: "always" });
}
