import { writtenToolKeys } from "./writtenToolKeys.js";
import {
  canonicalJson,
  describeInvalidSpec,
  hashWrittenTool,
  parseDefinition,
  specOf,
} from "./writtenToolSpec.js";
import type {
  WrittenToolDefinition,
  WrittenToolSpec,
  WrittenToolsRedis,
} from "./writtenToolTypes.js";

/**
 * Saves one version atomically. The current hash is the last of the history: the same hash
 * again changes nothing. Otherwise the hash is appended (the list's new length is the
 * version), the definition is completed with that version (ARGV[3] is its JSON up to
 * `"version":`), stored, its spec kept by hash, and the revision bumped.
 * KEYS: tools, history, blobs, rev. ARGV: name, hash, definition prefix, canonical spec.
 */
const SAVE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and redis.call('LINDEX', KEYS[2], -1) == ARGV[2] then
  return {0, current}
end
local version = redis.call('RPUSH', KEYS[2], ARGV[2])
local text = ARGV[3] .. version .. '}'
redis.call('HSET', KEYS[1], ARGV[1], text)
redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[4])
redis.call('INCR', KEYS[4])
return {1, text}
`;

/** Reads the revision and every current definition in one atomic step. KEYS: rev, tools. */
const LOAD_SCRIPT = `
return {redis.call('GET', KEYS[1]) or '0', redis.call('HGETALL', KEYS[2])}
`;

/** The result of `saveWrittenTool`. */
export interface SavedWrittenTool {
  definition: WrittenToolDefinition;
  /** False when the current version already had this content (nothing was written). */
  changed: boolean;
}

/** Every current written tool, with the revision it was read at. */
export interface WrittenToolsSnapshot {
  rev: number;
  definitions: WrittenToolDefinition[];
  /** Names whose stored definition could not be read (skipped). */
  invalid: string[];
}

/**
 * Stores a written tool in Redis, content-hashed and versioned: the same content as the current
 * version returns that version unchanged; changed content becomes the next version, its hash
 * is appended to the name's history and the revision counter is bumped, so every process sees
 * it on its next `syncWrittenTools`. Atomic (one script). Rejects when the spec is invalid
 * (see `describeInvalidSpec`) or Redis fails.
 *
 * @example
 * const { definition, changed } = await saveWrittenTool(redis, "yiem", spec);
 * // definition.version === 1, definition.hash === "9f2c…", changed === true
 */
export async function saveWrittenTool(
  redis: WrittenToolsRedis,
  prefix: string,
  spec: WrittenToolSpec,
): Promise<SavedWrittenTool> {
  const problem = describeInvalidSpec(spec);
  if (problem) throw new Error(`invalid written tool: ${problem}`);
  const keys = writtenToolKeys(prefix);
  const clean = specOf(spec);
  const hash = hashWrittenTool(clean);
  const withoutVersion = { ...clean, hash, writtenAt: new Date().toISOString() };
  const head = `${JSON.stringify(withoutVersion).slice(0, -1)},"version":`;
  const reply = (await redis.eval(
    SAVE_SCRIPT,
    4,
    keys.tools,
    keys.history(clean.name),
    keys.blobs,
    keys.rev,
    clean.name,
    hash,
    head,
    canonicalJson(clean),
  )) as [number, string];
  const definition = parseDefinition(reply[1]);
  if (!definition) throw new Error(`the stored definition of ${clean.name} cannot be read`);
  return { definition, changed: reply[0] === 1 };
}

/** The revision counter of written tools (0 before the first save). Rejects when Redis fails. */
export async function readWrittenToolsRev(
  redis: WrittenToolsRedis,
  prefix: string,
): Promise<number> {
  return Number((await redis.get(writtenToolKeys(prefix).rev)) ?? 0);
}

/**
 * Every current written tool, read atomically with the revision it belongs to. Definitions
 * that cannot be read are skipped and named in `invalid`. Rejects when Redis fails.
 */
export async function loadWrittenTools(
  redis: WrittenToolsRedis,
  prefix: string,
): Promise<WrittenToolsSnapshot> {
  const keys = writtenToolKeys(prefix);
  const [rev, flat] = (await redis.eval(LOAD_SCRIPT, 2, keys.rev, keys.tools)) as [
    string,
    string[],
  ];
  const definitions: WrittenToolDefinition[] = [];
  const invalid: string[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i] ?? "";
    const definition = parseDefinition(flat[i + 1] ?? "");
    if (definition && definition.name === name) definitions.push(definition);
    else invalid.push(name);
  }
  definitions.sort((a, b) => a.name.localeCompare(b.name));
  return { rev: Number(rev), definitions, invalid };
}

/** The hashes of every version of `name`, oldest first (empty when it was never written). */
export function writtenToolHistory(
  redis: WrittenToolsRedis,
  prefix: string,
  name: string,
): Promise<string[]> {
  return redis.lrange(writtenToolKeys(prefix).history(name), 0, -1);
}

/** The spec stored under `hash` (any version of any tool), or `undefined`. */
export async function loadWrittenToolVersion(
  redis: WrittenToolsRedis,
  prefix: string,
  hash: string,
): Promise<WrittenToolSpec | undefined> {
  const text = await redis.hget(writtenToolKeys(prefix).blobs, hash);
  return text ? (JSON.parse(text) as WrittenToolSpec) : undefined;
}
