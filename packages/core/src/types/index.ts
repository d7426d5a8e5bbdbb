/**
 * The shapes every folder shares, types only: content, events, model calls, messages, the
 * pipeline's steps, tools.
 */

export type {
  AssistantContent,
  ImageContent,
  MessageContent,
  TextContent,
  ThinkingContent,
  ToolCallContent,
} from "./content.js";
export type {
  AgentEndEvent,
  AgentEvent,
  AgentHandoffEvent,
  AgentStartEvent,
  EmitFn,
  MessageEndEvent,
  MessageUpdateEvent,
  ToolApprovalDecidedEvent,
  ToolApprovalRequestedEvent,
  ToolExecEndEvent,
  ToolExecStartEvent,
  ToolExecUpdateEvent,
  TurnEndEvent,
  TurnStartEvent,
} from "./events.js";
export type {
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  LlmCall,
  LlmCallOptions,
  LlmRequest,
  LlmRequestFailure,
  ResponseFormat,
} from "./llm.js";
export type {
  AgentMessage,
  AssistantMessage,
  LlmUsage,
  OpenAIUserPart,
  StopReason,
  ToolResultMessage,
  UserInput,
  UserMessage,
} from "./messages.js";
export type {
  AfterToolCallContext,
  AfterToolCallHook,
  AfterToolCallResult,
  AgentContext,
  AgentLoopConfig,
  AgentToolCallBatch,
  BeforeToolCallContext,
  BeforeToolCallHook,
  BeforeToolCallResult,
  ExecutedOutcome,
  ExecutionContext,
  ExtractToolCallsOptions,
  FinalizedOutcome,
  ImmediateOutcome,
  OutputCheck,
  OutputMode,
  OutputValidator,
  PreparedToolCall,
  ToolExecutionMode,
  ToolExecutor,
} from "./pipeline.js";
export type {
  AgentTool,
  AgentToolCall,
  AgentToolResult,
  JsonSchema,
  PartialResultCallback,
  ToolArgs,
  ToolExecuteFn,
} from "./tools.js";
export type { ModelPrice, PriceTable, RunBudget, RunUsage } from "./usage.js";
