import { llmCallOfAgent } from "../agents/agentRegistry.js";
import { type AgentDefinition, DEFAULT_AGENT } from "../agents/defineAgent.js";
import type { LlmCall } from "../types/index.js";

/** What of a coordinator's options says which agents it serves. */
export interface AgentOptions {
  agents?: readonly AgentDefinition[];
  llmCall?: LlmCall;
  /** The `default` agent's, when `agents` is not given (resolved: `resolveCoordinatorOptions`). */
  systemPrompt: string;
  model: string;
}

/**
 * The agents a coordinator serves, each with its model call: `agents` when given (an agent
 * without `llmCall` gets an OpenAI-compatible one, `llmCallOfAgent`), else one agent named
 * `default` with `systemPrompt` and `llmCall`, as a coordinator had before agents. Throws
 * when neither `agents` nor `llmCall` is given.
 */
export function servedAgentsOf(options: AgentOptions): [AgentDefinition, LlmCall][] {
  if (options.agents && options.agents.length > 0)
    return options.agents.map((definition) => [definition, llmCallOfAgent(definition)]);
  if (!options.llmCall) throw new Error("startCoordinator needs llmCall or agents");
  const definition: AgentDefinition = {
    name: DEFAULT_AGENT,
    instructions: options.systemPrompt,
    model: options.model,
  };
  return [[definition, options.llmCall]];
}

/** The agents with their model calls wrapped by `wrap` (timing and counting them for the metrics, by agent). */
export function wrapAgentCalls(
  options: AgentOptions,
  wrap: (llmCall: LlmCall, agent: AgentDefinition) => LlmCall,
): AgentDefinition[] {
  return servedAgentsOf(options).map(([definition, llmCall]) => ({
    ...definition,
    llmCall: wrap(llmCall, definition),
  }));
}
