import type { AgentMessage, AgentTool } from "../types/index.js";

/**
 * An agent's mutable runtime state (the YiemAgent lifecycle's `agentState`). Every field the
 * lifecycle names is kept, including the two Yiem itself never reads (`pendingToolCalls`,
 * `activeRun`): they are what a program watching `YiemAgent.state` reads to tell whether the
 * agent is busy and which calls are running.
 */
export interface AgentState {
  systemPrompt: string;
  model?: string;
  tools: Map<string, AgentTool>;
  messages: AgentMessage[];
  /** Ids of tool calls started and not yet ended. */
  pendingToolCalls: Set<string>;
  /** True while a run is in progress (the lifecycle's loop states 3–5). */
  activeRun: boolean;
  errorMessage?: string;
}
