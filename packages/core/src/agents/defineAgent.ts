import type { StandardSchemaV1 } from "@standard-schema/spec";
import { YiemError } from "../errors/yiemError.js";
import { handoffToolName } from "../features/handoffs/handoffTools.js";
import type { JsonSchema, LlmCall, RunBudget } from "../types/index.js";
import { describeBadRunSettings } from "./agentRunConfig.js";

/** The name every deployment without `YIEM_AGENTS` gives its one agent, and requests without `agent` go to. */
export const DEFAULT_AGENT = "default";

/** What an agent name may be: it is written in job data, session keys and logs. */
export const AGENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Sampling settings of an agent's model requests; any field left out is not sent. */
export interface ModelSettings {
  temperature?: number;
  /** Sent as `max_tokens`. */
  maxTokens?: number;
  /** Sent as `top_p`. */
  topP?: number;
}

/** What an agent's `instructions` function is given: the session it writes the system prompt for. */
export interface AgentSession {
  sessionId: string;
}

/**
 * One named agent of a deployment: its system prompt, its model (name, settings, server, API
 * key), the tools its model is offered, and its turn cap. Every coordinator of a deployment
 * serves every agent; a session belongs to the agent that started it.
 */
export interface AgentDefinition {
  name: string;
  /** The system prompt, or a function of the session that returns it. */
  instructions: string | ((session: AgentSession) => string);
  /** The model name sent with every request of this agent. */
  model: string;
  modelSettings?: ModelSettings;
  /** The OpenAI-compatible server of this agent's model. Default: the coordinator's (`OPENAI_BASE_URL`). */
  baseURL?: string;
  /** The environment variable holding this agent's API key. Default: `OPENAI_API_KEY`. */
  apiKeyEnv?: string;
  /**
   * A ready model call for this agent (code only); `model`, `modelSettings`, `baseURL` and
   * `apiKeyEnv` then only describe it.
   */
  llmCall?: LlmCall;
  /** The names of the tools this agent's model is offered and may call. Absent: every tool. */
  tools?: readonly string[];
  /** Turns per run. Default: the coordinator's `maxTurns`. */
  maxTurns?: number;
  /**
   * Structured output: the JSON Schema (or, in code, a Standard Schema such as zod, which then
   * validates the answer itself) the final answer must match; its parsed value is the job's
   * `output` (see `AgentLoopConfig.outputSchema`).
   */
  outputSchema?: JsonSchema | StandardSchemaV1;
  /** Corrections sent back after an invalid final answer before the run fails. Default 2. */
  outputRetries?: number;
  /** What one run of this agent may use, lowered (never raised) by the coordinator's `budget`. */
  budget?: RunBudget;
  /**
   * What this agent does, in a sentence: the description of the tools other agents reach it
   * by (`agent__<name>` for agents that may call it, `transfer_to_<name>` for those that may
   * hand off to it).
   */
  description?: string;
  /**
   * The agents this agent may hand a session over to: its model is offered one tool
   * `transfer_to_<name>` per name (see `handoffToolName`). Each must be another defined agent.
   */
  handoffs?: readonly string[];
  /**
   * The JSON Schema of the arguments agents calling this one give (`agent__<name>`). Default:
   * `{ input: string }`. With another schema, the child run's input is the arguments' JSON.
   */
  inputSchema?: JsonSchema;
  /**
   * The agents this agent's model may call, each offered as a tool `agent__<name>`: a call
   * starts a child run of that agent (its own session, a coordinator job) and its final answer
   * is the call's result.
   */
  agents?: readonly string[];
}

/** What `yiem agents` shows of one agent, and what coordinators compare (with its digest). */
export interface AgentSummary {
  name: string;
  model: string;
  /** Its tool names; `undefined` means every tool. */
  tools?: string[];
  maxTurns?: number;
  baseURL?: string;
  /** What it does, in a sentence (its definition's `description`), when it has one. */
  description?: string;
}

/** An agent definition that breaks a rule: names the agent and the field. Terminal. */
export class InvalidAgentError extends YiemError {
  constructor(
    readonly agent: string,
    readonly field: string,
    reason: string,
  ) {
    super(`agent "${agent}": ${field}: ${reason}`);
    this.name = "InvalidAgentError";
  }
}

function checkPositiveInteger(name: string, field: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    throw new InvalidAgentError(name, field, "must be a positive integer");
}

function checkOptionalString(name: string, field: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== "string" || value.trim() === "")
    throw new InvalidAgentError(name, field, "must be a non-empty string");
}

function checkModelSettings(name: string, settings: unknown): void {
  if (settings === undefined) return;
  if (typeof settings !== "object" || settings === null || Array.isArray(settings))
    throw new InvalidAgentError(name, "modelSettings", "must be an object");
  const known = new Set(["temperature", "maxTokens", "topP"]);
  for (const [key, value] of Object.entries(settings)) {
    const field = `modelSettings.${key}`;
    if (!known.has(key))
      throw new InvalidAgentError(
        name,
        field,
        "unknown setting (known: temperature, maxTokens, topP)",
      );
    if (key === "maxTokens") checkPositiveInteger(name, field, value);
    else if (typeof value !== "number" || !Number.isFinite(value))
      throw new InvalidAgentError(name, field, "must be a number");
  }
}

function checkHandoffs(name: string, handoffs: unknown): void {
  if (handoffs === undefined) return;
  if (
    !Array.isArray(handoffs) ||
    handoffs.some((h) => typeof h !== "string" || !AGENT_NAME.test(h))
  )
    throw new InvalidAgentError(name, "handoffs", "must be a list of agent names");
  if (handoffs.includes(name))
    throw new InvalidAgentError(name, "handoffs", "must not name the agent itself");
  const unnamable = handoffs.find((h) => !TOOL_NAME.test(handoffToolName(h)));
  if (unnamable !== undefined)
    throw new InvalidAgentError(
      name,
      "handoffs",
      `"${unnamable}" makes no valid tool name ${handoffToolName(unnamable)} (letters, digits, '_' or '-', 64 at most)`,
    );
}

/** What a tool name the OpenAI API takes may be: a handoff's `transfer_to_<name>` must be one. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function checkTools(name: string, tools: unknown): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== "string" || t === ""))
    throw new InvalidAgentError(name, "tools", "must be a list of tool names");
}

function checkAgentCalls(name: string, definition: AgentDefinition): void {
  checkOptionalString(name, "description", definition.description);
  const schema = definition.inputSchema;
  if (
    schema !== undefined &&
    (typeof schema !== "object" || schema === null || Array.isArray(schema))
  )
    throw new InvalidAgentError(name, "inputSchema", "must be a JSON Schema object");
  const { agents } = definition;
  if (agents === undefined) return;
  if (!Array.isArray(agents) || agents.some((a) => typeof a !== "string" || !AGENT_NAME.test(a)))
    throw new InvalidAgentError(name, "agents", "must be a list of agent names");
}

/**
 * Checks an agent definition and returns it as given. Throws `InvalidAgentError` naming the
 * agent and the field: a name outside `AGENT_NAME`, missing `instructions` or `model`, a
 * setting that is not a number, a `tools` that is not a list of names, a `handoffs` that is
 * not a list of other agents' names, a `maxTurns` or `outputRetries` that is not a positive
 * integer, an `agents` that is not a list of agent names, an `inputSchema` that is not an
 * object. Whether each handoff and callee names a defined agent is checked where all are
 * known (`AgentRegistry`).
 *
 * @example
 * const support = defineAgent({ name: "support", instructions: "Help customers.", model: "gpt-4o-mini", tools: ["getTime"] });
 */
export function defineAgent(definition: AgentDefinition): AgentDefinition {
  const name = String(definition.name);
  if (typeof definition.name !== "string" || !AGENT_NAME.test(definition.name))
    throw new InvalidAgentError(name, "name", "must be 1-64 letters, digits, '_', '.' or '-'");
  const { instructions } = definition;
  if (typeof instructions !== "function" && (typeof instructions !== "string" || !instructions))
    throw new InvalidAgentError(name, "instructions", "must be a non-empty string or a function");
  checkOptionalString(name, "model", definition.model);
  if (definition.model === undefined) throw new InvalidAgentError(name, "model", "is required");
  checkModelSettings(name, definition.modelSettings);
  checkOptionalString(name, "baseURL", definition.baseURL);
  checkOptionalString(name, "apiKeyEnv", definition.apiKeyEnv);
  if (definition.llmCall !== undefined && typeof definition.llmCall !== "function")
    throw new InvalidAgentError(name, "llmCall", "must be a function");
  checkTools(name, definition.tools);
  checkOptionalString(name, "description", definition.description);
  checkHandoffs(name, definition.handoffs);
  checkPositiveInteger(name, "maxTurns", definition.maxTurns);
  checkPositiveInteger(name, "outputRetries", definition.outputRetries);
  checkAgentCalls(name, definition);
  const badSettings = describeBadRunSettings(definition);
  if (badSettings) {
    const [field, ...reason] = badSettings.split(": ");
    throw new InvalidAgentError(name, field ?? "outputSchema", reason.join(": "));
  }
  return definition;
}
