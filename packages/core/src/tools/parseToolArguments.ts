import { SETTINGS } from "../settings/catalogue.js";
import type { ToolArgs } from "../types/index.js";
import { jsonTextNestsDeeperThan, valueNestsDeeperThan } from "./jsonDepth.js";

/** Keys that could reach an object's prototype when copied; never accepted from a model. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** The outcome of `parseToolArguments`: the arguments, or why they were refused. */
export type ParsedArguments = { ok: true; args: ToolArgs } | { ok: false; error: string };

/** Options of `parseToolArguments`. */
export interface ParseArgumentsOptions {
  maxBytes?: number;
  /** Default `YIEM_MAX_ARGUMENT_DEPTH`'s default (64). */
  maxDepth?: number;
}

/**
 * Turns what a model sent as a call's arguments into a plain object.
 *
 * Accepts a JSON string (OpenAI's form), an object, or nothing (`{}`). Refuses, with an error
 * text the model can act on: a string that does not parse, a value that is not an object, a
 * payload over `maxBytes`, one that nests objects and arrays more than `maxDepth` levels deep
 * (measured before parsing, without recursion: nothing downstream, no validator, clone or
 * `JSON.stringify`, ever walks a value deep enough to overflow the stack), and any
 * `__proto__` / `constructor` / `prototype` key at any depth. Never throws.
 *
 * @example
 * parseToolArguments('{"city":"Tokyo"}') // { ok: true, args: { city: "Tokyo" } }
 * parseToolArguments("{oops")            // { ok: false, error: "arguments are not valid JSON: ..." }
 */
export function parseToolArguments(
  raw: unknown,
  options: ParseArgumentsOptions = {},
): ParsedArguments {
  const maxBytes = options.maxBytes ?? SETTINGS.maxArgumentBytes.default;
  const maxDepth = options.maxDepth ?? SETTINGS.maxArgumentDepth.default;
  if (raw === undefined || raw === null || raw === "") return { ok: true, args: {} };
  if (typeof raw !== "string" && valueNestsDeeperThan(raw, maxDepth)) return tooDeep(maxDepth);
  const text = typeof raw === "string" ? raw : safeStringify(raw);
  if (text === undefined) return { ok: false, error: "arguments are not serialisable JSON" };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    return { ok: false, error: `arguments are too large: ${bytes} bytes (limit ${maxBytes})` };
  }
  if (jsonTextNestsDeeperThan(text, maxDepth)) return tooDeep(maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON: ${(err as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: `arguments must be a JSON object, got ${describeJsonType(value)}` };
  }
  const forbidden = findForbiddenKey(value);
  if (forbidden) return { ok: false, error: `arguments contain a forbidden key: ${forbidden}` };
  return { ok: true, args: value as ToolArgs };
}

function tooDeep(maxDepth: number): ParsedArguments {
  return {
    ok: false,
    error: `arguments are nested too deeply (limit ${maxDepth} levels of objects and arrays)`,
  };
}

function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Depth-first search for a forbidden key; returns its path, e.g. `a.b.__proto__`. */
function findForbiddenKey(value: unknown, path = ""): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const here = path ? `${path}.${key}` : key;
    if (FORBIDDEN_KEYS.has(key)) return here;
    const found = findForbiddenKey((value as Record<string, unknown>)[key], here);
    if (found) return found;
  }
  return undefined;
}
