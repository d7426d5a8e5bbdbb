import type { GatewayServices } from "../http/route.js";
import { defineRoute, json } from "../http/route.js";
import { type GatewayKey, mayUseAgent } from "../keys/gatewayKey.js";
import { agentListSchema } from "../schemas.js";

/** An agent as `GET /v1/agents` lists it. */
export interface UsableAgent {
  name: string;
  model: string;
  tools?: string[];
  maxTurns?: number;
  /** What it does, in a sentence (its definition's `description`), when it has one. */
  description?: string;
}

/** `GET /v1/agents`: the agents the running coordinators serve that the key may use. */
export const listAgentsRoute = defineRoute({
  method: "GET",
  path: "/v1/agents",
  summary:
    "The agents the running coordinators serve that this key may use: name, model, tools, turn cap, description.",
  scope: "read",
  responses: { 200: { description: "the agents", schema: agentListSchema } },
  async handle({ key, services }) {
    return json(200, { agents: await listUsableAgents(services, key) });
  },
});

/** The agents the running coordinators announce that `key` may use, each once, by name. */
export async function listUsableAgents(
  services: GatewayServices,
  key: GatewayKey,
): Promise<UsableAgent[]> {
  const announcements = await services.client.agents();
  const byName = new Map<string, UsableAgent>();
  for (const announcement of announcements) {
    for (const agent of announcement.agents) {
      if (byName.has(agent.name) || !mayUseAgent(key, agent.name)) continue;
      byName.set(agent.name, {
        name: agent.name,
        model: agent.model,
        ...(agent.tools ? { tools: agent.tools } : {}),
        ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
        ...(agent.description !== undefined ? { description: agent.description } : {}),
      });
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
