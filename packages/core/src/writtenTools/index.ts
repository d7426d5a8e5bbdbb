export {
  createWrittenToolsSync,
  syncWrittenTools,
  type WrittenToolsSync,
  type WrittenToolsSyncOptions,
  type WrittenToolsSyncResult,
} from "./syncWrittenTools.js";
export { toAgentTool, writtenToolOf } from "./toAgentTool.js";
export {
  ALLOW_WRITE_TOOL_ENV,
  createWriteTool,
  isWriteToolAllowed,
  WRITE_TOOL_DISABLED,
  WRITE_TOOL_NAME,
  type WriteToolOptions,
} from "./writeTool.js";
export {
  describeInvalidSpec,
  hashWrittenTool,
  WRITTEN_TOOL_LIMITS,
  WRITTEN_TOOL_NAME,
} from "./writtenToolSpec.js";
export {
  loadWrittenTools,
  loadWrittenToolVersion,
  readWrittenToolsRev,
  type SavedWrittenTool,
  saveWrittenTool,
  type WrittenToolsSnapshot,
  writtenToolHistory,
} from "./writtenToolStore.js";
export type {
  WrittenToolDefinition,
  WrittenToolSpec,
  WrittenToolsRedis,
} from "./writtenToolTypes.js";
