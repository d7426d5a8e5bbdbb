import type { AgentDefinition } from "../../agents/defineAgent.js";
import type { Logger } from "../../ops/logger.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { Tenants } from "../../settings/tenantSettings.js";
import type { LlmCall } from "../../types/index.js";
import { limitLlmCall } from "./limitLlmCall.js";
import type { ProviderLimitObserver } from "./limitObserver.js";
import { limitOfCall, type ModelLimits } from "./modelLimits.js";
import { ProviderLimit } from "./providerLimit.js";

/** What `limitAgentCalls` is built with. */
export interface AgentCallLimitsDeps {
  command: RedisClient;
  keys: ClusterKeys;
  log: Logger;
  /** Tenants' shares (`YIEM_TENANTS`): waiting tenants' calls are served in turn by them. */
  tenants?: Tenants;
  /** The coordinator, named in each waiting call's id (`modelCallId`). */
  coordinatorId: string;
  /** Told each wait, 429 and admitted call (the coordinator's metrics). Default: none. */
  observer?: ProviderLimitObserver;
  /** The server of agents that name no `baseURL` (a limit's `baseURL` is matched against it). */
  defaultBaseURL?: string;
}

/** The served agents with their limited calls, and the limits they use. */
export interface AgentCallLimits {
  agents: [AgentDefinition, LlmCall][];
  /** One per limit some agent's model is under. */
  limits: ProviderLimit[];
}

/**
 * The served agents with each model call under its model's shared provider limit
 * (`limitOfCall` of `limits` by the agent's `model`, server and key variable; `limitLlmCall`), each call naming this
 * coordinator and its agent in Redis. Agents whose model no limit covers keep their call as it
 * is. Agents of one limit share its `ProviderLimit`.
 */
export function limitAgentCalls(
  served: readonly (readonly [AgentDefinition, LlmCall])[],
  limits: ModelLimits | undefined,
  deps: AgentCallLimitsDeps,
): AgentCallLimits {
  const byName = new Map<string, ProviderLimit>();
  const agents = served.map(([definition, llmCall]): [AgentDefinition, LlmCall] => {
    const limit = limitOfCall(limits, {
      model: definition.model,
      baseURL: definition.baseURL ?? deps.defaultBaseURL,
      ...(definition.apiKeyEnv ? { apiKeyEnv: definition.apiKeyEnv } : {}),
    });
    if (!limit) return [definition, llmCall];
    let shared = byName.get(limit.name);
    if (!shared) {
      shared = new ProviderLimit(deps.command, deps.keys, limit);
      byName.set(limit.name, shared);
    }
    const caller = { coordinatorId: deps.coordinatorId, agent: definition.name };
    return [
      definition,
      limitLlmCall(llmCall, shared, deps.log, {
        caller,
        observer: deps.observer,
        tenants: deps.tenants,
      }),
    ];
  });
  return { agents, limits: [...byName.values()] };
}

/**
 * Writes the limits this coordinator applies into the cluster's index of limits
 * (`keys.modelLimits`, what `readProviderLimits` lists). One command; never rejects (a reader
 * then misses a limit until another coordinator starts): `log` warns.
 */
export async function announceModelLimits(
  limits: readonly ProviderLimit[],
  deps: Pick<AgentCallLimitsDeps, "command" | "keys" | "log">,
): Promise<void> {
  if (limits.length === 0) return;
  const fields = limits.flatMap((l) => [l.limit.name, JSON.stringify(l.limit)]);
  await deps.command.hset(deps.keys.modelLimits, ...fields).catch((err: unknown) => {
    deps.log.warn({ err: (err as Error).message }, "could not list the provider limits in Redis");
  });
}
