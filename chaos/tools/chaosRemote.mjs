// `chaosRemote`: a remote call (a tool worker runs it), never retried: at most once.
import { chaosTool } from "../ledgerTool.mjs";

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return chaosTool("chaosRemote", { parallelToolExecute: true, retries: 0 });
}
