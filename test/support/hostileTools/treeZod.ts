import type { AgentTool } from "@yiem/core";
import { treeZodTool } from "../hostileTree.js";

/** Test tool `treeZod`: a `defineTool` tool with a recursive zod schema (on the coordinator). */
export function getTool(): AgentTool {
  return treeZodTool("treeZod");
}
