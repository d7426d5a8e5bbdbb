import type { AgentTool } from "@yiem/core";
import { treeJsonTool } from "../../hostileTree.js";

/** Test tool `treeJsonRemote`: `treeJson` on workers only, prepared and validated there. */
export function getTool(): AgentTool {
  return treeJsonTool("treeJsonRemote", true);
}
