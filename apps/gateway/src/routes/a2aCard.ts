import type { IncomingMessage } from "node:http";
import { defaultAgentOf } from "@yiem/core";
import { z } from "zod";
import { notFound } from "../http/gatewayError.js";
import { defineRoute, type GatewayServices, json } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { errorSchema } from "../schemas.js";
import { listUsableAgents, type UsableAgent } from "./agents.js";

/** The A2A protocol version the gateway's A2A face speaks. */
export const A2A_PROTOCOL_VERSION = "1.0";

/** An agent card (A2A v1.0), loosely: the OpenAPI document names its main fields. */
const agentCardSchema = z.looseObject({
  name: z.string(),
  description: z.string(),
  supportedInterfaces: z.array(z.looseObject({ url: z.string(), protocolBinding: z.string() })),
  skills: z.array(z.looseObject({ id: z.string(), name: z.string() })),
});

/** The origin a client reached the gateway at, for the card's URLs. */
function originOf(req: IncomingMessage): string {
  const forwarded = req.headers["x-forwarded-proto"];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
  return `${proto === "https" ? "https" : "http"}://${req.headers.host ?? "localhost"}`;
}

/**
 * The skills of `agent`: the agent itself (its description, its tools as tags), then one per
 * tool it may call.
 */
function skillsOf(agent: UsableAgent) {
  const tools = agent.tools ?? [];
  const own = {
    id: agent.name,
    name: agent.name,
    description: agent.description ?? `the ${agent.name} agent (model ${agent.model})`,
    tags: ["agent", ...tools],
    examples: [],
  };
  const perTool = tools.map((tool) => ({
    id: `${agent.name}.${tool}`,
    name: tool,
    description: `${agent.name} calls the ${tool} tool; its calls run on the Yiem cluster`,
    tags: ["tool"],
  }));
  return [own, ...perTool];
}

/**
 * The A2A agent card of `agent`: its JSON-RPC interface at `url` (v1.0, and v0.3) and its
 * HTTP+JSON one at `url/rest` (v1.0), streaming, push notifications when `push` (the gateway
 * allows webhook hosts: `YIEM_A2A_PUSH_HOSTS`), bearer auth with a gateway key, text and data in and out, its skills.
 */
export function agentCardOf(agent: UsableAgent, url: string, version: string, push = false) {
  return {
    name: agent.name,
    description: agent.description ?? `the ${agent.name} agent of a Yiem cluster`,
    // The same endpoint answers v0.3's method names (message/send…) in v0.3's shapes.
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: A2A_PROTOCOL_VERSION },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      // The HTTP+JSON binding: `${url}/rest/message:send`, `…/rest/tasks/{id}`…
      { url: `${url}/rest`, protocolBinding: "HTTP+JSON", protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: { organization: "Yiem", url: url.replace(/\/v1\/a2a.*$/, "") },
    version,
    capabilities: { streaming: true, pushNotifications: push, extendedAgentCard: false },
    securitySchemes: {
      gatewayKey: {
        httpAuthSecurityScheme: {
          scheme: "bearer",
          description: "a Yiem gateway key: Authorization: Bearer <key>",
        },
      },
    },
    securityRequirements: [{ schemes: { gatewayKey: { list: [] } } }],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: skillsOf(agent),
  };
}

/**
 * The agent `name` names among those `key` may use (the coordinators' default for none); a
 * 404 for another. An agent offered every tool lists the tools the live workers run.
 */
async function usableAgent(
  services: GatewayServices,
  key: GatewayKey,
  name: string | undefined,
): Promise<UsableAgent> {
  const agents = await listUsableAgents(services, key);
  const wanted = name ?? defaultAgentOf(agents.map((a) => a.name)) ?? agents[0]?.name;
  const agent = agents.find((a) => a.name === wanted);
  if (!agent) throw notFound("agent", name ?? "default");
  if (agent.tools) return agent;
  const workers = await services.client.workers();
  const tools = [...new Set(workers.flatMap((worker) => worker.tools))].sort();
  return { ...agent, tools };
}

const cardResponses = {
  200: { description: "the agent card (A2A v1.0)", schema: agentCardSchema },
  404: { description: "no such agent for this key", schema: errorSchema },
};

/**
 * `GET /.well-known/agent-card.json`: the card of the default agent (A2A discovery). Its
 * JSON-RPC interface is `POST /v1/a2a`.
 */
export function defaultAgentCardRoute(version: string) {
  return defineRoute({
    method: "GET",
    path: "/.well-known/agent-card.json",
    summary:
      "The A2A agent card of the coordinators' default agent (one this key may use): skills from its description and tools, bearer auth with a gateway key, its JSON-RPC interface at POST /v1/a2a (A2A v1.0). A key is needed: the card says what this key may use.",
    scope: "read",
    responses: cardResponses,
    async handle({ req, key, services }) {
      const agent = await usableAgent(services, key, undefined);
      const push = services.a2aPushHosts.length > 0;
      return json(200, agentCardOf(agent, `${originOf(req)}/v1/a2a`, version, push));
    },
  });
}

/** `GET /v1/a2a/{agent}/.well-known/agent-card.json`: the card of one agent. */
export function agentCardRoute(version: string) {
  return defineRoute({
    method: "GET",
    path: "/v1/a2a/{agent}/.well-known/agent-card.json",
    summary:
      "The A2A agent card of one agent this key may use (404 for another), its JSON-RPC interface at POST /v1/a2a/{agent}: an A2A client given the base URL /v1/a2a/{agent}/ (with its trailing slash) finds it.",
    scope: "read",
    responses: cardResponses,
    async handle({ req, key, params, services }) {
      const agent = await usableAgent(services, key, params.agent);
      const url = `${originOf(req)}/v1/a2a/${encodeURIComponent(agent.name)}`;
      return json(200, agentCardOf(agent, url, version, services.a2aPushHosts.length > 0));
    },
  });
}
