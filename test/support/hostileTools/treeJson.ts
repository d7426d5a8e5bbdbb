import type { AgentTool } from "@yiem/core";
import { treeJsonTool } from "../hostileTree.js";

/** Test tool `treeJson`: a plain JSON Schema tool with a recursive schema (on the coordinator). */
export function getTool(): AgentTool {
  return treeJsonTool("treeJson");
}
