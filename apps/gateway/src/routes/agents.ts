import { defineRoute, json } from "../http/route.js";
import { mayUseAgent } from "../keys/gatewayKey.js";
import { agentListSchema } from "../schemas.js";

/** `GET /v1/agents`: the agents the running coordinators serve that the key may use. */
export const listAgentsRoute = defineRoute({
  method: "GET",
  path: "/v1/agents",
  summary:
    "The agents the running coordinators serve that this key may use: name, model, tools, turn cap.",
  scope: "read",
  responses: { 200: { description: "the agents", schema: agentListSchema } },
  async handle({ key, services }) {
    const announcements = await services.client.agents();
    const byName = new Map<
      string,
      { name: string; model: string; tools?: string[]; maxTurns?: number }
    >();
    for (const announcement of announcements) {
      for (const agent of announcement.agents) {
        if (byName.has(agent.name) || !mayUseAgent(key, agent.name)) continue;
        byName.set(agent.name, {
          name: agent.name,
          model: agent.model,
          ...(agent.tools ? { tools: agent.tools } : {}),
          ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
        });
      }
    }
    const agents = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
    return json(200, { agents });
  },
});
