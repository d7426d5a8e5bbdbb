// `chaosRemoteRetried`: a remote call retried once when its worker dies: at most twice.
import { chaosTool } from "../ledgerTool.mjs";

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return chaosTool("chaosRemoteRetried", { parallelToolExecute: true, retries: 1 });
}
