import { randomUUID } from "node:crypto";
import { SETTINGS } from "../settings/catalogue.js";
import type { AgentToolCall, ExtractToolCallsOptions, ToolCallContent } from "../types/index.js";
import { valueNestsDeeperThan } from "./jsonDepth.js";
import { type ParsedArguments, parseToolArguments } from "./parseToolArguments.js";

type Block = Record<string, unknown>;

/** The caps a call's arguments are read with. */
interface ArgumentCaps {
  maxBytes: number;
  maxDepth: number;
}

/** The caps of `options`, defaults filled in. */
function capsOf(options: Pick<ExtractToolCallsOptions, "maxArgumentBytes" | "maxArgumentDepth">) {
  return {
    maxBytes: options.maxArgumentBytes ?? SETTINGS.maxArgumentBytes.default,
    maxDepth: options.maxArgumentDepth ?? SETTINGS.maxArgumentDepth.default,
  };
}

/** Keys that could reach a prototype; the same ones `parseToolArguments` refuses. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** One call read from any shape, with why its arguments were refused when they were. */
export interface ReadToolCall {
  /** The call in canonical form, as the transcript keeps it. */
  block: ToolCallContent;
  /** Why the arguments were refused (parse error, not an object, too large, forbidden key). */
  error?: string;
}

/** A fresh id for a call that came without one: `call_` and 24 hex digits. */
function generateToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

function isBlock(value: unknown): value is Block {
  return typeof value === "object" && value !== null;
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * True when `value` holds only what `JSON.parse` produces (strings, finite numbers, booleans,
 * null, arrays, plain objects), with no forbidden key and no object reached twice (no cycle).
 */
function isSafeJsonValue(value: unknown, seen: Set<object>): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.every((item) => isSafeJsonValue(item, seen));
  if (!isPlainObject(value)) return false;
  return Object.entries(value).every(
    ([key, item]) => !FORBIDDEN_KEYS.has(key) && isSafeJsonValue(item, seen),
  );
}

function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * True when an already parsed arguments object can be kept without parsing `raw` again: a
 * non-empty safe plain object within `maxDepth` levels whose JSON (`raw` when the model sent
 * one) fits `maxBytes`. An empty object proves nothing (an adapter leaves `{}` when `raw`
 * failed to parse). The depth is measured first, so nothing after it recurses too deep.
 */
function isReusable(parsed: Block, raw: string | undefined, caps: ArgumentCaps): boolean {
  try {
    if (Array.isArray(parsed) || Object.keys(parsed).length === 0) return false;
    if (valueNestsDeeperThan(parsed, caps.maxDepth)) return false;
    if (!isSafeJsonValue(parsed, new Set())) return false;
    const text = raw ?? jsonText(parsed);
    return text !== undefined && Buffer.byteLength(text, "utf8") <= caps.maxBytes;
  } catch {
    return false; // a getter or proxy that throws: let `parseToolArguments` refuse it
  }
}

/**
 * The call's arguments: the parsed object it already carries when that one is safe, else
 * what `parseToolArguments` makes of its raw string (or of that object), which also names
 * the reason for a refusal. So a normal call's JSON string is parsed once, by the adapter.
 */
function readArguments(
  raw: string | undefined,
  parsed: Block | undefined,
  caps: ArgumentCaps,
): ParsedArguments {
  if (parsed && isReusable(parsed, raw, caps)) return { ok: true, args: parsed };
  return parseToolArguments(raw ?? parsed, caps);
}

/**
 * What a refused call keeps as `rawArguments` when the object it sent has no JSON text (a
 * cycle, or nesting too deep to write out): not JSON, so reading the block again refuses it
 * again, and nothing unwritable stays in the transcript.
 */
const UNWRITABLE_ARGUMENTS = "(arguments that cannot be written as JSON)";

/**
 * Where a refused call keeps its payload: `rawArguments` (the model's string, the JSON text
 * of an object it sent, or `UNWRITABLE_ARGUMENTS`) with `arguments: {}`, so reading the block
 * again refuses it again.
 */
function keepRefused(block: ToolCallContent, parsed: Block | undefined, caps: ArgumentCaps): void {
  if (block.rawArguments !== undefined || parsed === undefined) return;
  const text = valueNestsDeeperThan(parsed, caps.maxDepth) ? undefined : jsonText(parsed);
  block.rawArguments = text ?? UNWRITABLE_ARGUMENTS;
}

/** Reads one call in any shape: canonical, lifecycle top-level `name`, or OpenAI `function.name`. */
function readCall(data: Block, caps: ArgumentCaps): ReadToolCall {
  const fn = isBlock(data.function) ? data.function : {};
  const raw = [data.rawArguments, data.arguments, fn.arguments].find(isString);
  const parsed = [data.arguments, fn.arguments].find(isBlock);
  const block: ToolCallContent = {
    type: "toolCall",
    id: asString(data.id) ?? generateToolCallId(),
    name: asString(data.name) ?? asString(fn.name) ?? "",
    arguments: {},
  };
  if (raw !== undefined) block.rawArguments = raw;
  let outcome: ParsedArguments;
  try {
    outcome = readArguments(raw, parsed, caps);
  } catch (err) {
    // The last line of defence: whatever the arguments do, they fail this call alone.
    outcome = { ok: false, error: `arguments could not be read: ${(err as Error)?.message}` };
  }
  if (outcome.ok) {
    block.arguments = outcome.args;
    return { block };
  }
  keepRefused(block, parsed, caps);
  return { block, error: outcome.error };
}

/**
 * Reads every tool call block of a content array once (lifecycle §7): the canonical block the
 * transcript keeps, with ids filled in, and why its arguments were refused if they were.
 * Reads the canonical `{type:"toolCall"}` block and both lifecycle shapes: `{type:"tool_calls",
 * tool_calls:[...]}` (name at the top or under `function`) and `{type:"tool_call"}`; other
 * blocks are ignored. A block's `arguments` is reused when it is a safe, non-empty plain
 * object within `maxArgumentBytes` and `maxArgumentDepth` (so JSON an adapter already parsed
 * is not parsed again); otherwise its `rawArguments` (or that object) goes through
 * `parseToolArguments`. Refused arguments leave `arguments: {}` and the payload in
 * `rawArguments`. Never throws: whatever one call's arguments do fails that call alone.
 */
export function readToolCalls(
  content: readonly unknown[],
  options: Pick<ExtractToolCallsOptions, "maxArgumentBytes" | "maxArgumentDepth"> = {},
): ReadToolCall[] {
  const caps = capsOf(options);
  const calls: ReadToolCall[] = [];
  for (const block of content) {
    if (!isBlock(block)) continue;
    if (block.type === "toolCall" || block.type === "tool_call") calls.push(readCall(block, caps));
    if (block.type === "tool_calls" && Array.isArray(block.tool_calls)) {
      for (const data of block.tool_calls) if (isBlock(data)) calls.push(readCall(data, caps));
    }
  }
  return calls;
}

/** Gives `call` a copy of the block's arguments, or an `argumentsError` when they cannot be copied. */
function copyArguments(call: AgentToolCall, block: ToolCallContent): void {
  try {
    call.arguments = structuredClone(block.arguments);
  } catch (err) {
    call.argumentsError = `${block.name}: arguments could not be read: ${(err as Error)?.message}`;
  }
}

/**
 * The calls the pipeline runs, from calls read by `readToolCalls`, in order. Each gets a copy
 * of its arguments, so the pipeline never changes the stored block. A call whose arguments
 * were refused, whose name is missing, or that exceeds `maxToolCalls`, carries
 * `argumentsError` and will become an error result, never a dispatch. Never throws.
 */
export function toAgentToolCalls(
  calls: readonly ReadToolCall[],
  options: Pick<ExtractToolCallsOptions, "maxToolCalls"> = {},
): AgentToolCall[] {
  const maxToolCalls = options.maxToolCalls ?? SETTINGS.maxToolCalls.default;
  return calls.map(({ block, error }, index) => {
    const call: AgentToolCall = { type: "function", id: block.id, name: block.name, arguments: {} };
    if (index >= maxToolCalls) {
      call.argumentsError = `too many tool calls in one message: ${calls.length} (limit ${maxToolCalls}); this call was not run`;
      return call;
    }
    if (!block.name) {
      call.argumentsError = "the tool call has no tool name";
      return call;
    }
    if (error !== undefined) call.argumentsError = `${block.name}: ${error}`;
    else copyArguments(call, block);
    return call;
  });
}

/**
 * Every tool call block of a content array in canonical form, ids filled in (lifecycle §7):
 * the blocks of `readToolCalls`. Arguments that are malformed, not an object, oversized or
 * hostile leave `arguments: {}` and keep the payload in `rawArguments`, so `extractToolCalls`
 * turns the block into that call's error result. Never throws, never dispatches anything.
 *
 * @example
 * normalizeToolCallBlocks([{ type: "toolCall", id: "c1", name: "f", arguments: {}, rawArguments: '{"a":1}' }])
 * // [{ type: "toolCall", id: "c1", name: "f", arguments: { a: 1 }, rawArguments: '{"a":1}' }]
 */
export function normalizeToolCallBlocks(
  content: readonly unknown[],
  options: Pick<ExtractToolCallsOptions, "maxArgumentBytes" | "maxArgumentDepth"> = {},
): ToolCallContent[] {
  return readToolCalls(content, options).map((call) => call.block);
}

/**
 * The tool calls of an assistant message's content, in order, ready for the pipeline
 * (lifecycle §7): `readToolCalls`, then `toAgentToolCalls`. A call whose arguments are
 * malformed, not an object, oversized or hostile, whose name is missing, or that exceeds
 * `maxToolCalls`, carries `argumentsError` and will become an error result, never a
 * dispatch. A missing id is generated. Never throws.
 *
 * @example
 * extractToolCalls([{ type: "toolCall", id: "c1", name: "getTime", arguments: {}, rawArguments: '{"timezone":"UTC"}' }])
 * // [{ type: "function", id: "c1", name: "getTime", arguments: { timezone: "UTC" } }]
 */
export function extractToolCalls(
  content: readonly unknown[],
  options: ExtractToolCallsOptions = {},
): AgentToolCall[] {
  return toAgentToolCalls(readToolCalls(content, options), options);
}
