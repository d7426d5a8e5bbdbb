import type { AgentContext } from "../types/index.js";
import type { AgentState } from "./agentState.js";

/**
 * The default `prepareContext` hook (lifecycle §14): the state's system prompt, a copy of its
 * message list (messages themselves are never mutated) and its tools. Override it to filter
 * tools, change the system prompt or inject context before each LLM call.
 */
export function prepareContext(state: AgentState): AgentContext {
  return { systemPrompt: state.systemPrompt, messages: [...state.messages], tools: state.tools };
}
