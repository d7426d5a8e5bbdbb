import type { AgentRegistry, ServedAgent } from "../../agents/agentRegistry.js";
import { DEFAULT_AGENT } from "../../agents/defineAgent.js";
import { SessionStoreError } from "../../protocol/errors.js";
import type { SessionAgents } from "../../state/sessionAgents.js";
import type { AssistantMessage, LlmCall } from "../../types/index.js";

/**
 * The agent of a session this coordinator does not serve (the coordinators' definitions
 * disagree): every model call answers with an error naming it, and it has no tools, so the
 * session's runs end with that error instead of running under another agent's prompt and tools.
 */
function unservedAgent(name: string, coordinatorId: string): ServedAgent {
  const errorMessage = `agent "${name}" is not defined on coordinator ${coordinatorId} (the coordinators' YIEM_AGENTS differ: see yiem agents)`;
  const llmCall: LlmCall = async (): Promise<AssistantMessage> => ({
    role: "assistant",
    content: [],
    api: "none",
    provider: "none",
    model: "none",
    stopReason: "error",
    errorMessage,
    timestamp: Date.now(),
  });
  return {
    name,
    definition: { name, instructions: "-", model: "none", tools: [] },
    llmCall,
    instructionsFor: () => "",
    toolsFrom: () => new Map(),
  };
}

/**
 * How a session runner finds the agent of a session: the one its first request recorded
 * (`SessionAgents`), `default` for a session that has none (started before agents). Throws
 * `SessionStoreError` when Redis fails.
 *
 * @example const agentOf = sessionAgentFinder(registry, sessionAgents, "c-1"); (await agentOf("s-1")).name
 */
export function sessionAgentFinder(
  registry: AgentRegistry,
  sessions: SessionAgents,
  coordinatorId: string,
): (sessionId: string) => Promise<ServedAgent> {
  return async (sessionId) => {
    let name: string;
    try {
      name = (await sessions.read(sessionId)) ?? DEFAULT_AGENT;
    } catch (err) {
      throw new SessionStoreError(sessionId, err);
    }
    return registry.get(name) ?? unservedAgent(name, coordinatorId);
  };
}
