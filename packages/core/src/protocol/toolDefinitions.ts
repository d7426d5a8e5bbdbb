import { createHash } from "node:crypto";
import { stringify } from "safe-stable-stringify";
import type { AgentTool, JsonSchema } from "../types/index.js";

/**
 * What a tool worker announces of one of its tools: everything a coordinator needs to offer
 * it to the model, validate its arguments and dispatch its calls, without the tool's code.
 * JSON only; `hasPrepareArguments` / `hasValidateRequiredArgs` say the tool has its own
 * functions, which then run on the worker (see `ToolJobData.prepareOnWorker`).
 */
export interface ToolDefinition {
  name: string;
  label: string;
  description: string;
  inputSchema: JsonSchema;
  parallelToolExecute?: boolean;
  queue?: string;
  concurrency?: number;
  rateLimit?: { max: number; durationMs: number };
  retries?: number;
  idempotent?: boolean;
  timeoutMs?: number;
  approval?: "always";
  approvalTimeoutMs?: number;
  hasPrepareArguments?: true;
  hasValidateRequiredArgs?: true;
}

/** A tool's definition (its fields without its functions; absent options are left out). */
export function toToolDefinition(tool: AgentTool): ToolDefinition {
  const definition: ToolDefinition = {
    name: tool.name,
    label: tool.label,
    description: tool.description,
    inputSchema: tool.inputSchema,
    parallelToolExecute: tool.parallelToolExecute,
    queue: tool.queue,
    concurrency: tool.concurrency,
    rateLimit: tool.rateLimit && { max: tool.rateLimit.max, durationMs: tool.rateLimit.durationMs },
    retries: tool.retries,
    idempotent: tool.idempotent,
    timeoutMs: tool.timeoutMs,
    approval: tool.approval,
    approvalTimeoutMs: tool.approvalTimeoutMs,
    hasPrepareArguments: tool.prepareArguments ? true : undefined,
    hasValidateRequiredArgs: tool.validateRequiredArgs ? true : undefined,
  };
  return JSON.parse(JSON.stringify(definition)) as ToolDefinition; // drops the undefined ones
}

/**
 * The definition's JSON, with object keys sorted, so that equal definitions give equal text
 * whatever order their code wrote the keys in.
 */
export function definitionJson(definition: ToolDefinition): string {
  return stringify(definition);
}

/**
 * The content address of a definition: the SHA-256 of its sorted JSON, hex, first 32
 * characters. Two workers announce the same digest exactly when their definitions agree.
 *
 * @example digestOfJson(definitionJson(toToolDefinition(tool))) // "3f2a…" (32 hex digits)
 */
export function digestOfJson(json: string): string {
  return createHash("sha256").update(json).digest("hex").slice(0, 32);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads a definition stored in Redis: `undefined` when it is no JSON object with a string
 * `name`, `label`, `description` and an object `inputSchema` (what a coordinator needs), so
 * a bad entry is skipped, never trusted.
 */
export function parseToolDefinition(json: string): ToolDefinition | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!isObject(value) || !isObject(value.inputSchema)) return undefined;
  const { name, label, description } = value;
  if (typeof name !== "string" || typeof label !== "string" || typeof description !== "string")
    return undefined;
  return value as unknown as ToolDefinition;
}
