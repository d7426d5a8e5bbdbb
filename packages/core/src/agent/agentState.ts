import type { AgentMessage, AgentTool } from "../types/index.js";

/** An agent's mutable runtime state (the YiemAgent lifecycle's `agentState`). */
export interface AgentState {
  systemPrompt: string;
  model?: string;
  tools: Map<string, AgentTool>;
  messages: AgentMessage[];
  /** The `errorMessage` of the last run's response (none when it succeeded). */
  errorMessage?: string;
}

/** The system prompt used when none is given (the YiemAgent lifecycle's default). */
export const DEFAULT_SYSTEM_PROMPT = "You are helpful assistant.";
