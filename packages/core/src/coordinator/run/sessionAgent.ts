import type { AgentRegistry, ServedAgent } from "../../agents/agentRegistry.js";
import { DEFAULT_AGENT } from "../../agents/defineAgent.js";
import { SessionStoreError } from "../../protocol/errors.js";
import type { SessionAgents } from "../../state/sessionAgents.js";
import type { AssistantMessage, LlmCall } from "../../types/index.js";

/** An agent another may hand off to, with its description. */
type AgentTarget = { name: string; description?: string };

/** The agent a session runs as, its system prompt for that session, and the agents it may hand off to. */
export interface SessionAgent {
  agent: ServedAgent;
  systemPrompt: string;
  /** Its `handoffs`, each with its description (none: the agent hands off to no one). */
  handoffs?: readonly AgentTarget[];
  /** The agents it may call (its `agents`). */
  callees?: ServedAgent[];
}

/** The handoff targets of `agent`, described by their definitions in `registry`. */
function handoffTargetsOf(registry: AgentRegistry, agent: ServedAgent): AgentTarget[] {
  return (agent.definition.handoffs ?? []).map((name) => {
    const description = registry.get(name)?.definition.description;
    return description === undefined ? { name } : { name, description };
  });
}

/**
 * An agent this coordinator cannot run a session as (not defined here: the coordinators'
 * definitions disagree; or its instructions failed): every model call answers with
 * `errorMessage`, and it has no tools, so the session's runs end with that error instead of
 * running under another agent's prompt and tools.
 */
function failingAgent(name: string, errorMessage: string): SessionAgent {
  const llmCall: LlmCall = async (): Promise<AssistantMessage> => ({
    role: "assistant",
    content: [],
    api: "none",
    provider: "none",
    model: "", // no model answered: the run's usage counts no model call (isModelAnswer)
    stopReason: "error",
    errorMessage,
    timestamp: Date.now(),
  });
  const agent: ServedAgent = {
    name,
    definition: { name, instructions: "-", model: "none", tools: [] },
    llmCall,
    instructionsFor: () => "",
    toolsFrom: () => new Map(),
  };
  return { agent, systemPrompt: "" };
}

/** The agent with its prompt for `sessionId`; a failing agent when its instructions throw. */
function withPrompt(agent: ServedAgent, sessionId: string): SessionAgent {
  try {
    return { agent, systemPrompt: agent.instructionsFor({ sessionId }) };
  } catch (err) {
    return failingAgent(
      agent.name,
      `the instructions of agent "${agent.name}" failed: ${(err as Error).message}`,
    );
  }
}

/**
 * How a session runner finds the agent of a session: its current one (`SessionAgents`: the
 * one its first request recorded, or the last handoff's target), `default` for a session that
 * has none (started before agents); `known`, when given, is that agent already (a session
 * this coordinator just made: nothing to read). Throws
 * `SessionStoreError` when Redis fails; never for the agent itself (see `failingAgent`).
 *
 * @example const agentOf = sessionAgentFinder(registry, sessionAgents, "c-1"); (await agentOf("s-1")).agent.name
 */
export function sessionAgentFinder(
  registry: AgentRegistry,
  sessions: SessionAgents,
  coordinatorId: string,
): (sessionId: string, known?: string) => Promise<SessionAgent> {
  return async (sessionId, known) => {
    let name: string;
    try {
      name = known ?? (await sessions.read(sessionId)) ?? DEFAULT_AGENT;
    } catch (err) {
      throw new SessionStoreError(sessionId, err);
    }
    const agent = registry.get(name);
    if (agent) {
      const found = withPrompt(agent, sessionId);
      if (found.agent !== agent) return found;
      return {
        ...found,
        handoffs: handoffTargetsOf(registry, agent),
        callees: registry.calleesOf(name),
      };
    }
    return failingAgent(
      name,
      `agent "${name}" is not defined on coordinator ${coordinatorId} (the coordinators' YIEM_AGENTS differ: see yiem agents)`,
    );
  };
}
