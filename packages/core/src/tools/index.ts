export * from "./abortListener.js";
export { localToolExecutor } from "./batchSteps.js";
export * from "./emitSafely.js";
export * from "./executePreparedToolCall.js";
export * from "./executeToolCalls.js";
export {
  DEFAULT_MAX_TOOL_CALLS,
  extractToolCalls,
  normalizeToolCallBlocks,
} from "./extractToolCalls.js";
export * from "./finalizeExecutedToolCall.js";
export * from "./isAgentTool.js";
export * from "./listTool.js";
export * from "./loadTools.js";
export * from "./parseToolArguments.js";
export * from "./prepareToolCall.js";
export * from "./toolResults.js";
export * from "./toolStore.js";
export * from "./validateArguments.js";
