import type { AgentDefinition } from "../../agents/defineAgent.js";
import type { Logger } from "../../ops/logger.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import type { Tenants } from "../../settings/tenantSettings.js";
import type { LlmCall } from "../../types/index.js";
import { limitLlmCall } from "./limitLlmCall.js";
import { limitOfModel, type ModelLimits } from "./modelLimits.js";
import { ProviderLimit } from "./providerLimit.js";

/** What `limitAgentCalls` is built with. */
export interface AgentCallLimitsDeps {
  command: RedisClient;
  keys: ClusterKeys;
  log: Logger;
  /** Tenants' shares (`YIEM_TENANTS`): waiting tenants' calls are served in turn by them. */
  tenants?: Tenants;
}

/**
 * The served agents with each model call under its model's shared provider limit
 * (`limitOfModel` of `limits` by the agent's `model`; `limitLlmCall`). Agents whose model no
 * limit covers keep their call as it is. Agents of one limit share its `ProviderLimit`.
 */
export function limitAgentCalls(
  served: readonly (readonly [AgentDefinition, LlmCall])[],
  limits: ModelLimits | undefined,
  deps: AgentCallLimitsDeps,
): [AgentDefinition, LlmCall][] {
  const byName = new Map<string, ProviderLimit>();
  return served.map(([definition, llmCall]) => {
    const limit = limitOfModel(limits, definition.model);
    if (!limit) return [definition, llmCall];
    let shared = byName.get(limit.name);
    if (!shared) {
      shared = new ProviderLimit(deps.command, deps.keys, limit);
      byName.set(limit.name, shared);
    }
    return [definition, limitLlmCall(llmCall, shared, deps.log, deps.tenants)];
  });
}
