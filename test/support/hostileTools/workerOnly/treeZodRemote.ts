import type { AgentTool } from "@yiem/core";
import { treeZodTool } from "../../hostileTree.js";

/** Test tool `treeZodRemote`: `treeZod` on workers only (its zod schema validates there). */
export function getTool(): AgentTool {
  return treeZodTool("treeZodRemote");
}
