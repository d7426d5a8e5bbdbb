import type { MessageContent } from "./content.js";
import type { EmitFn } from "./events.js";
import type { AgentMessage, AssistantMessage, LlmUsage, ToolResultMessage } from "./messages.js";
import type { AgentTool, AgentToolCall, AgentToolResult, JsonSchema, ToolArgs } from "./tools.js";
import type { PriceTable, RunBudget } from "./usage.js";

/** The conversation snapshot a turn works on: what `prepareContext` returns. */
export interface AgentContext {
  systemPrompt: string;
  messages: AgentMessage[];
  tools: Map<string, AgentTool>;
}

/** Passed to `beforeToolCall`, after arguments were prepared and validated. */
export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: ToolArgs;
  context: AgentContext;
}

/**
 * What `beforeToolCall` may return: `{block: true, reason}` stops the call;
 * `{requireApproval: {reason}}` makes this one call wait for a human decision (cluster only).
 */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  requireApproval?: { reason: string };
}

/** Passed to `afterToolCall`, with the executed result. */
export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: ToolArgs;
  result: AgentToolResult;
  isError: boolean;
  context: AgentContext;
}

/** What `afterToolCall` may return: each field present replaces the result's. */
export interface AfterToolCallResult {
  content?: MessageContent[];
  details?: Record<string, unknown>;
  usage?: LlmUsage;
  terminate?: boolean;
  isError?: boolean;
}

/** Runs before a tool executes; may block it. May be async. */
export type BeforeToolCallHook = (
  ctx: BeforeToolCallContext,
  signal?: AbortSignal,
) => BeforeToolCallResult | undefined | Promise<BeforeToolCallResult | undefined>;

/** Runs after a tool executed; may replace parts of its result. May be async. */
export type AfterToolCallHook = (
  ctx: AfterToolCallContext,
  signal?: AbortSignal,
) => AfterToolCallResult | undefined | Promise<AfterToolCallResult | undefined>;

/** `"parallel"` lets batches whose tools all allow it run concurrently. */
export type ToolExecutionMode = "sequential" | "parallel";

/** A call that passed preparation and may execute. */
export interface PreparedToolCall {
  kind: "prepared";
  tool: AgentTool;
  toolCall: AgentToolCall;
  args: ToolArgs;
  /** Set when the call must wait for a human decision before it runs, with the reason shown. */
  approval?: { reason: string };
}

/** A call that ended during preparation (unknown tool, invalid arguments, blocked, aborted). */
export interface ImmediateOutcome {
  kind: "immediate";
  result: AgentToolResult;
  isError: boolean;
}

/** A call's result straight from execution, before `afterToolCall`. */
export interface ExecutedOutcome {
  result: AgentToolResult;
  isError: boolean;
  /** The tool worker that ran the call, when one did (cluster); carried to `toolExecEnd`. */
  workerId?: string;
}

/** A call's final result, after every phase: its executed outcome as `afterToolCall` left it. */
export interface FinalizedOutcome extends ExecutedOutcome {
  toolCall: AgentToolCall;
}

/** The tool result messages of one batch, in call order, and whether the run stops here. */
export interface AgentToolCallBatch {
  messages: ToolResultMessage[];
  terminate: boolean;
}

/** How the batch that a call belongs to runs; lets an executor route calls. */
export interface ExecutionContext {
  mode: ToolExecutionMode;
}

/**
 * Where a prepared call runs: in-process by default, a tool queue on the cluster.
 * Contract: never throws; failures (including aborts and timeouts) become error outcomes.
 */
export interface ToolExecutor {
  execute(
    prepared: PreparedToolCall,
    signal: AbortSignal | undefined,
    emit: EmitFn,
    context?: ExecutionContext,
  ): Promise<ExecutedOutcome>;
}

/** Options of `extractToolCalls`. */
export interface ExtractToolCallsOptions {
  maxToolCalls?: number;
  maxArgumentBytes?: number;
  /**
   * How deeply one call's arguments may nest objects and arrays; deeper arguments are that
   * call's error result, measured before anything parses or validates them.
   * @defaultValue 64
   */
  maxArgumentDepth?: number;
}

/**
 * How the model is asked for output matching `outputSchema`: `"jsonSchema"` sends it as the
 * request's `response_format` (`{ type: "json_schema", json_schema: { name, schema, strict } }`),
 * for servers that enforce it (OpenAI, vLLM, llama.cpp, Ollama); `"instructions"` writes the
 * schema into the system prompt instead, for servers that lack `response_format`.
 */
export type OutputMode = "jsonSchema" | "instructions";

/**
 * Checks a parsed final answer in place of the JSON Schema check (the seam for a Standard
 * Schema / zod validator): `{ ok: true, value }` makes `value` the run's output (a validator
 * may transform it); `{ ok: false, errors }` sends the errors back to the model. May be async.
 */
export type OutputValidator = (value: unknown) => OutputCheck | Promise<OutputCheck>;

/** What an `OutputValidator` says of one answer. */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; errors: string[] };

/**
 * How runs behave: one object that goes whole from the agent (or the coordinator) to the
 * loop and to every batch, never copied field by field. Every field is optional; the
 * defaults are in the comments.
 */
export interface AgentLoopConfig {
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
  /** Default `"parallel"` (a batch with a tool that does not allow it still runs sequentially). */
  toolExecution?: ToolExecutionMode;
  /** Where prepared calls run. Default: this process (`localToolExecutor`). */
  executor?: ToolExecutor;
  /** The most LLM calls in one run. Default `DEFAULT_MAX_TURNS` (50). */
  maxTurns?: number;
  /**
   * Caps: `maxToolCalls` per model message (64), `maxArgumentBytes` per call (256 KiB) and
   * `maxArgumentDepth` (64 levels; see `extractToolCalls`), and `maxContextBytes`, the transcript sent in one request
   * (4 MiB; past it, earlier tool results, then the oldest turns, then earlier answers are
   * left out, the latest turn never; see `trimContext`).
   */
  limits?: ExtractToolCallsOptions & { maxContextBytes?: number };
  /**
   * Structured output: the JSON Schema the run's final answer (a model answer with no tool
   * calls) must match. The answer's text is parsed as JSON (one fenced block is accepted) and
   * checked with ajv; a valid one becomes the final response's `output`. An invalid one goes
   * back to the model as a user message listing the errors, up to `outputRetries` times;
   * then the run ends with `stopReason: "error"`. Tool calls work as usual meanwhile; runs a
   * tool terminates, refusals, errors and aborts end without a check. Default: none.
   */
  outputSchema?: JsonSchema;
  /** How the model is asked for it (see `OutputMode`). Default `"jsonSchema"`. */
  outputMode?: OutputMode;
  /** Corrections sent back after an invalid final answer before the run fails. Default 2. */
  outputRetries?: number;
  /**
   * The `name` sent in `response_format.json_schema` (letters, digits, `_`, `-`; up to 64).
   * Default: the schema's `title` when it is such a name, else `"output"`.
   */
  outputName?: string;
  /** Sent as `response_format.json_schema.strict` when set (OpenAI's strict mode). Default: omitted. */
  outputStrict?: boolean;
  /** Replaces the ajv check of the parsed answer (a Standard Schema adapter). Default: ajv on `outputSchema`. */
  validateOutput?: OutputValidator;
  /** Prices by model: with them, a run's usage (`agentEnd`) carries `costUsd`. */
  prices?: PriceTable;
  /** Limits on what one run may use, checked before each model call (see `RunBudget`). */
  budget?: RunBudget;
  /**
   * The tenant the run is made for (its tree's root's `CoordinatorJobData.tenant`), passed to
   * each model call (`LlmCallOptions.tenant`). Set by the coordinator. Default: none.
   */
  tenant?: string;
}
