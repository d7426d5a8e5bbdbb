import { DEFAULT_AGENT, defaultAgentOf } from "@yiem/core";
import { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import { type GatewayKey, mayUseAgent } from "../keys/gatewayKey.js";
import { expectVisibleSession } from "./sessionAccess.js";

/**
 * How a request's agent is read: `explicit` (`POST /v1/runs`: the agent named must be the
 * session's, else the coordinators refuse the run), or `newSession` (the chat faces, whose
 * clients send the same agent or model with every message: it picks the agent of a new
 * session; a continued session is answered by its current agent, after a handoff the one it
 * was handed to).
 */
export type AgentField = "explicit" | "newSession";

/** What `resolveRunAgent` reads of a request. */
export interface AgentRequest {
  agent?: string;
  sessionId?: string;
}

/**
 * The agent a request is sent to, checked against `key`'s `agents` (the session's current
 * agent is the one that runs: a session handed off to an agent the key may not use is a 403
 * saying so). A request naming no agent goes to its session's current agent, or for a new
 * session to the coordinators' default (`defaultAgentOf` of the agents they announce; a 400
 * when they serve several and none is `default`). A session of another key is a 404 before
 * any of this is said. The agent is always named in the job, so a handoff between this check
 * and the coordinator's intake makes the coordinators refuse the run, never run an agent the
 * key may not use.
 */
export async function resolveRunAgent(
  services: GatewayServices,
  key: GatewayKey,
  request: AgentRequest,
  field: AgentField,
): Promise<string> {
  const sessionId = request.sessionId;
  const current = sessionId ? await services.store.agentOf(sessionId) : undefined;
  if (sessionId && current !== undefined) await expectVisibleSession(services, key, sessionId);
  const named = field === "explicit" || current === undefined ? request.agent : undefined;
  const agent = named ?? current ?? (await defaultAgent(services));
  for (const runs of new Set([agent, current ?? agent])) {
    if (mayUseAgent(key, runs)) continue;
    const where =
      runs === current && sessionId
        ? `, the agent session ${sessionId} is with now (a handoff may have moved it there)`
        : "";
    throw new GatewayError(
      403,
      "forbidden",
      `this key may not use agent "${runs}"${where}`,
      "agent",
    );
  }
  return agent;
}

/**
 * The agent a new session naming none starts with: the coordinators' default among the agents
 * they announce; `default` while none announces (the coordinators then decide). A 400 when they
 * serve several agents and none is named `default`.
 */
async function defaultAgent(services: GatewayServices): Promise<string> {
  const announcements = await services.client.agents();
  const names = [...new Set(announcements.flatMap((a) => a.agents.map((agent) => agent.name)))];
  if (names.length === 0) return DEFAULT_AGENT;
  const found = defaultAgentOf(names.sort());
  if (found !== undefined) return found;
  throw new GatewayError(
    400,
    "invalid_request",
    `name an agent: a new session needs one, and none of the agents served is named "default" (served: ${names.join(", ")})`,
    "agent",
  );
}
