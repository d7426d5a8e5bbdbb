import { createHash } from "node:crypto";
import { createOpenAILlmCall } from "../llm/openaiLlmCall.js";
import { processEnv } from "../settings/readSettings.js";
import type { AgentTool, LlmCall } from "../types/index.js";
import { toolsOfAgent } from "./agentTools.js";
import {
  type AgentDefinition,
  type AgentSession,
  type AgentSummary,
  InvalidAgentError,
} from "./defineAgent.js";

/** An agent as a coordinator serves it: its definition and the model call made from it. */
export interface ServedAgent {
  name: string;
  definition: AgentDefinition;
  llmCall: LlmCall;
  /** The system prompt for a session of this agent. */
  instructionsFor(session: AgentSession): string;
  /** The agent's tools out of `all` (a live view; all of them when it names none). */
  toolsFrom(all: Map<string, AgentTool>): Map<string, AgentTool>;
}

/** Where an agent's model call comes from when its definition gives no `llmCall`. */
export interface ModelDefaults {
  /** The server of agents that name no `baseURL` (`OPENAI_BASE_URL`). */
  baseURL?: string;
  /** The key of agents that name no `apiKeyEnv` (`OPENAI_API_KEY`). */
  apiKey?: string;
  /** Where `apiKeyEnv` is read. @defaultValue this process's environment */
  env?: NodeJS.ProcessEnv;
  stream?: boolean;
}

/** The request-body fields of `modelSettings` the adapter has no option for. */
function extraBodyOf(definition: AgentDefinition): Record<string, unknown> | undefined {
  const { maxTokens, topP } = definition.modelSettings ?? {};
  const body: Record<string, unknown> = {};
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (topP !== undefined) body.top_p = topP;
  return Object.keys(body).length > 0 ? body : undefined;
}

/**
 * The model call of `definition`: its own `llmCall`, else an OpenAI-compatible call with its
 * model name, settings, server and key (`apiKeyEnv` must name a set variable).
 */
export function llmCallOfAgent(definition: AgentDefinition, defaults: ModelDefaults = {}): LlmCall {
  if (definition.llmCall) return definition.llmCall;
  const env = defaults.env ?? processEnv();
  let apiKey = defaults.apiKey;
  if (definition.apiKeyEnv) {
    apiKey = env[definition.apiKeyEnv];
    if (!apiKey)
      throw new InvalidAgentError(
        definition.name,
        "apiKeyEnv",
        `${definition.apiKeyEnv} is not set`,
      );
  }
  return createOpenAILlmCall({
    model: definition.model,
    baseURL: definition.baseURL ?? defaults.baseURL,
    apiKey,
    stream: defaults.stream,
    temperature: definition.modelSettings?.temperature,
    extraBody: extraBodyOf(definition),
  });
}

/** A definition as served, with the model call given (see `llmCallOfAgent`). */
function serve(definition: AgentDefinition, llmCall: LlmCall): ServedAgent {
  const { instructions, tools } = definition;
  return {
    name: definition.name,
    definition,
    llmCall,
    instructionsFor: (session) =>
      typeof instructions === "function" ? instructions(session) : instructions,
    toolsFrom: (all) => toolsOfAgent(all, tools),
  };
}

/** What of a definition its digest covers: everything a coordinator acts on, in a stable order. */
function digestPart(definition: AgentDefinition): unknown {
  const { instructions } = definition;
  return [
    definition.name,
    typeof instructions === "function" ? `fn:${instructions.toString()}` : instructions,
    definition.model,
    definition.modelSettings ?? null,
    definition.baseURL ?? null,
    definition.apiKeyEnv ?? null,
    definition.tools ? [...definition.tools].sort() : null,
    definition.maxTurns ?? null,
    definition.outputSchema ?? null,
    definition.outputRetries ?? null,
    definition.budget ?? null,
    // Fields added later count only when set: a definition without them hashes as before.
    ...(definition.description === undefined ? [] : [{ description: definition.description }]),
    ...(definition.handoffs === undefined ? [] : [{ handoffs: [...definition.handoffs].sort() }]),
    ...(definition.agents === undefined ? [] : [{ agents: [...definition.agents] }]),
    ...(definition.inputSchema === undefined ? [] : [{ inputSchema: definition.inputSchema }]),
  ];
}

/**
 * The agents one coordinator serves, by name. Built from definitions whose model calls are
 * resolved (`llmCallOfAgent`); the first definition's name is not special: requests without
 * `agent` go to `default` (or the session's current agent). Throws `InvalidAgentError` for a
 * name defined twice, or a handoff or callee (`agents`) that is not defined.
 *
 * @example
 * const registry = new AgentRegistry([[support, llmCallOfAgent(support)]]);
 * registry.get("support")?.instructionsFor({ sessionId: "s-1" });
 */
export class AgentRegistry {
  private readonly agents = new Map<string, ServedAgent>();

  constructor(served: readonly (readonly [AgentDefinition, LlmCall])[]) {
    for (const [definition, llmCall] of served) {
      if (this.agents.has(definition.name))
        throw new InvalidAgentError(definition.name, "name", "defined twice");
      this.agents.set(definition.name, serve(definition, llmCall));
    }
    for (const { definition } of this.agents.values()) {
      this.checkNamed(definition, "handoffs", definition.handoffs);
      this.checkNamed(definition, "agents", definition.agents);
    }
  }

  /** The agents the agent `name` may call (its `agents`), in the order it lists them. */
  calleesOf(name: string): ServedAgent[] {
    const names = this.agents.get(name)?.definition.agents ?? [];
    return names.flatMap((callee) => this.agents.get(callee) ?? []);
  }

  /** Throws `InvalidAgentError` when `names` (the definition's `field`) has an agent not defined. */
  private checkNamed(
    definition: AgentDefinition,
    field: "handoffs" | "agents",
    names: readonly string[] | undefined,
  ): void {
    const unknown = names?.find((name) => !this.agents.has(name));
    if (unknown === undefined) return;
    throw new InvalidAgentError(
      definition.name,
      field,
      `unknown agent "${unknown}" (known: ${this.names().join(", ")})`,
    );
  }

  /** The agent named `name`, if this coordinator serves it. */
  get(name: string): ServedAgent | undefined {
    return this.agents.get(name);
  }

  /** The names served, sorted. */
  names(): string[] {
    return [...this.agents.keys()].sort();
  }

  /** What `yiem agents` shows of each agent, sorted by name. */
  summaries(): AgentSummary[] {
    return this.names().map((name) => {
      const { definition } = this.agents.get(name) as ServedAgent;
      return {
        name,
        model: definition.model,
        ...(definition.tools ? { tools: [...definition.tools] } : {}),
        ...(definition.maxTurns ? { maxTurns: definition.maxTurns } : {}),
        ...(definition.baseURL ? { baseURL: definition.baseURL } : {}),
        ...(definition.description ? { description: definition.description } : {}),
      };
    });
  }

  /** A short hash of every definition (sha256, 16 hex digits): equal on coordinators that agree. */
  digest(): string {
    const parts = this.names().map((name) =>
      digestPart((this.agents.get(name) as ServedAgent).definition),
    );
    return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
  }
}
