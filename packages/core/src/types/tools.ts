import type { MessageContent } from "./content.js";
import type { LlmUsage } from "./messages.js";

/** Arguments of a tool call: a JSON object. */
export type ToolArgs = Record<string, unknown>;

/** A JSON Schema (MCP style: `type: "object"`, `properties`, `required`). */
export type JsonSchema = Record<string, unknown>;

/** What a tool returns. `terminate` asks the loop to stop after this batch (see `shouldTerminate`). */
export interface AgentToolResult {
  content: MessageContent[];
  details: Record<string, unknown>;
  usage?: LlmUsage;
  terminate?: boolean;
  addedToolNames?: string[];
}

/** Streams progress out of a running tool; each call becomes a `toolExecUpdate` event. */
export type PartialResultCallback = (partialResult: unknown) => void;

/**
 * A tool's code. Receives arguments that already passed `prepareArguments` and validation.
 * May throw: the pipeline turns a throw into an error result.
 */
export type ToolExecuteFn = (
  toolCallId: string,
  args: ToolArgs,
  signal: AbortSignal | undefined,
  onPartialResult: PartialResultCallback,
) => AgentToolResult | Promise<AgentToolResult>;

/**
 * A tool the model may call (the YiemAgent lifecycle's `agentTool`), plus where and how it runs on a cluster.
 *
 * @example
 * const echo: AgentTool = {
 *   name: "echo", label: "Echo", description: "Repeats its input",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   execute: (_id, args) => ({ content: [{ type: "text", text: String(args.text) }], details: {} }),
 * };
 */
export interface AgentTool {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  execute: ToolExecuteFn;
  /** Transforms arguments before validation. */
  prepareArguments?: (args: ToolArgs) => ToolArgs;
  /** Replaces the default JSON Schema validation: returns an error text, or nothing. */
  validateRequiredArgs?: (args: ToolArgs) => string | undefined;
  /** May run concurrently with the other calls of its batch. Default false. */
  parallelToolExecute?: boolean;
  /** Cluster: the tool queue whose workers run this tool. Default: the default queue. */
  queue?: string;
  /** Cluster and in-process: abort the call after this many milliseconds. */
  timeoutMs?: number;
  /**
   * Cluster: how many times a call whose worker died is tried again.
   * @defaultValue `DEFAULTS.toolRetries` (none)
   */
  retries?: number;
  /** Safe to run twice with the same arguments (a coordinator may re-run it after a crash). */
  idempotent?: boolean;
  /**
   * Cluster: the most calls of this tool running at once across all workers. A limited tool
   * gets a queue of its own (unless it names one: the limit then holds for that whole queue)
   * and always runs on workers; calls over the limit wait in the queue.
   */
  concurrency?: number;
  /** Cluster: at most `max` calls started per `durationMs` across all workers (as `concurrency`). */
  rateLimit?: { max: number; durationMs: number };
  /**
   * Cluster: `"always"` makes every call of this tool wait for a human decision
   * (`yiem approve` / `yiem deny`) before it runs; the run is parked meanwhile. In-process
   * (no cluster) such a call gets an error result and never runs.
   */
  approval?: "always";
  /**
   * Cluster: a call of this tool waiting for approval is denied on its own after this many
   * milliseconds (default: the coordinator's `approvalTimeoutMs`, none when unset).
   */
  approvalTimeoutMs?: number;
  /**
   * Tool files (`loadTools`): this tool replaces a tool of the same name loaded before it (a
   * built-in, or a file earlier in the folder's order). Without it, a second tool of a name is
   * refused, naming both files.
   */
  overrides?: true;
}

/**
 * One tool call as the pipeline sees it. `argumentsError` is set when the model's arguments
 * were malformed or hostile; such a call becomes an error result and never runs.
 */
export interface AgentToolCall {
  type: "function";
  /** The model's id for the call, as sent back on the wire; models may repeat it. */
  id: string;
  name: string;
  arguments: ToolArgs;
  argumentsError?: string;
  /**
   * The call's identity in its session, unique even when the model repeats an id: the id for
   * its first use, `<id>#<n>` for its n-th repeat, n raised past keys other calls already have
   * (see `assignCallKeys`). A cluster derives the call's job from it.
   */
  key?: string;
}
