import { randomUUID } from "node:crypto";
import type { AgentToolCall, ToolCallContent } from "../types/index.js";
import { parseToolArguments } from "./parseToolArguments.js";

/** Default cap on tool calls in one assistant message; calls past it become error results. */
export const DEFAULT_MAX_TOOL_CALLS = 64;

/** Options of `extractToolCalls`. */
export interface ExtractToolCallsOptions {
  maxToolCalls?: number;
  maxArgumentBytes?: number;
}

type Block = Record<string, unknown>;

function isBlock(value: unknown): value is Block {
  return typeof value === "object" && value !== null;
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Reads one call in any shape: canonical, seed top-level `name`, or OpenAI `function.name`. */
function readCall(data: Block): ToolCallContent {
  const fn = isBlock(data.function) ? data.function : {};
  const rawSource = data.rawArguments ?? data.arguments ?? fn.arguments;
  const call: ToolCallContent = {
    type: "toolCall",
    id: asString(data.id) ?? `call_${randomUUID()}`,
    name: asString(data.name) ?? asString(fn.name) ?? "",
    arguments: {},
  };
  if (typeof rawSource === "string") call.rawArguments = rawSource;
  else if (isBlock(rawSource)) call.arguments = rawSource as Record<string, unknown>;
  return call;
}

/**
 * Every tool call block of a content array in canonical form, ids filled in (seed §7).
 * Reads the canonical `{type:"toolCall"}` block and both seed shapes: `{type:"tool_calls",
 * tool_calls:[...]}` (name at the top or under `function`) and `{type:"tool_call"}`.
 * Never throws; anything else is ignored.
 */
export function normalizeToolCallBlocks(content: readonly unknown[]): ToolCallContent[] {
  const calls: ToolCallContent[] = [];
  for (const block of content) {
    if (!isBlock(block)) continue;
    if (block.type === "toolCall" || block.type === "tool_call") calls.push(readCall(block));
    if (block.type === "tool_calls" && Array.isArray(block.tool_calls)) {
      for (const data of block.tool_calls) if (isBlock(data)) calls.push(readCall(data));
    }
  }
  return calls;
}

/**
 * The tool calls of an assistant message's content, in order, ready for the pipeline
 * (seed §7). Arguments sent as a JSON string are parsed; a call whose arguments are
 * malformed, not an object, oversized or hostile, whose name is missing, or that exceeds
 * `maxToolCalls`, carries `argumentsError` and will become an error result, never a dispatch.
 * A missing id is generated. Never throws.
 *
 * @example
 * extractToolCalls([{ type: "toolCall", id: "c1", name: "getTime", arguments: {}, rawArguments: '{"timezone":"UTC"}' }])
 * // [{ type: "function", id: "c1", name: "getTime", arguments: { timezone: "UTC" } }]
 */
export function extractToolCalls(
  content: readonly unknown[],
  options: ExtractToolCallsOptions = {},
): AgentToolCall[] {
  const maxToolCalls = options.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
  const blocks = normalizeToolCallBlocks(content);
  return blocks.map((block, index) => {
    const call: AgentToolCall = { type: "function", id: block.id, name: block.name, arguments: {} };
    if (index >= maxToolCalls) {
      call.argumentsError = `too many tool calls in one message: ${blocks.length} (limit ${maxToolCalls}); this call was not run`;
      return call;
    }
    if (!block.name) {
      call.argumentsError = "the tool call has no tool name";
      return call;
    }
    const source = block.rawArguments ?? block.arguments;
    const parsed = parseToolArguments(source, { maxBytes: options.maxArgumentBytes });
    if (parsed.ok) call.arguments = parsed.args;
    else call.argumentsError = `${block.name}: ${parsed.error}`;
    return call;
  });
}
