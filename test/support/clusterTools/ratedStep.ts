import type { AgentTool } from "@yiem/core";
import { getRatedTool } from "./limitedSteps.js";

/** `ratedStep`: at most 5 calls started per second across the cluster (see limitedSteps.ts). */
export function getTool(): AgentTool {
  return getRatedTool();
}
