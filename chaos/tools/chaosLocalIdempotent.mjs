// `chaosLocalIdempotent`: like `chaosLocal`, but idempotent: a coordinator that takes over may run it again.
import { chaosTool } from "../ledgerTool.mjs";

/** @returns {import("@yiem/core").AgentTool} */
export function getTool() {
  return chaosTool("chaosLocalIdempotent", { parallelToolExecute: false, idempotent: true });
}
