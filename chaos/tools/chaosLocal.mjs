// `chaosLocal`: a sequential call the coordinator runs in-process, not idempotent: at most once.
import { chaosTool } from "../ledgerTool.mjs";

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return chaosTool("chaosLocal", { parallelToolExecute: false, idempotent: false });
}
