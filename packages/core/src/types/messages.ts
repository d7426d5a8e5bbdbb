import type { AssistantContent, MessageContent } from "./content.js";

/** Token counts reported by the model server (or by a tool that calls a model). */
export interface LlmUsage {
  /** Prompt tokens, cached ones included (`cachedInputTokens` is a part of them). */
  inputTokens: number;
  /** Completion tokens, reasoning ones included (`reasoningTokens` is a part of them). */
  outputTokens: number;
  /** The server's total, else `inputTokens + outputTokens`. */
  totalTokens: number;
  /** The part of `outputTokens` the model spent reasoning, when the server reports it. */
  reasoningTokens?: number;
  /** The part of `inputTokens` the server read from its prompt cache, when it reports it. */
  cachedInputTokens?: number;
}

/**
 * Why an assistant message ended. `toolUseTerminated` marks the synthetic final response of a
 * run that every tool of the last batch asked to terminate. `refusal`: the model declined to
 * answer (OpenAI's `refusal`); its reason is the message's text;
 * `budget` the final response of a
 * run that reached a limit of its budget (`AgentLoopConfig.budget`) before a model call.
 */
export type StopReason =
  | "stop"
  | "length"
  | "toolUse"
  | "toolUseTerminated"
  | "refusal"
  | "error"
  | "aborted"
  | "budget";

/** A message from the user. `timestamp` is milliseconds since the epoch. */
export interface UserMessage {
  role: "user";
  content: MessageContent[];
  timestamp: number;
}

/** A model's answer: text, thinking and tool calls, with the reason it stopped. */
export interface AssistantMessage {
  role: "assistant";
  content: AssistantContent[];
  api?: string;
  provider?: string;
  model?: string;
  usage?: LlmUsage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
  /**
   * The run's structured output: on a run's final response only (never in the transcript),
   * when the run had an `outputSchema` and its final answer matched it; the parsed JSON.
   */
  output?: unknown;
}

/**
 * The result of one tool call, as the model will see it. Exactly one exists per tool call id.
 * The role is `"toolResult"` inside Yiem and becomes `"tool"` on the wire to OpenAI.
 */
export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: MessageContent[];
  details: Record<string, unknown>;
  usage?: LlmUsage;
  addedToolNames?: string[];
  isError: boolean;
  timestamp: number;
}

/** Any message of a conversation. */
export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * What callers may pass as input: a plain string, a `UserMessage`, or an OpenAI-style
 * `{role: "user", content}` whose content is a string or an array of parts.
 */
export type UserInput =
  | string
  | UserMessage
  | { role: "user"; content: string | ReadonlyArray<OpenAIUserPart> };

/** A content part of an OpenAI-style user message. */
export type OpenAIUserPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | MessageContent;
