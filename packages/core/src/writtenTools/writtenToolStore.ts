import { writtenToolKeys } from "../redis/keys.js";
import { SaveWrittenToolReply } from "../redis/scriptReplies.js";
import { withScripts } from "../redis/scripts.js";
import { canonicalJson } from "../tools/canonicalJson.js";
import {
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
  const reply = await withScripts(redis).yiemSaveWrittenTool(
    keys.tools,
    keys.history(clean.name),
    keys.blobs,
    keys.rev,
    clean.name,
    hash,
    head,
    canonicalJson(clean),
  );
  const definition = parseDefinition(reply[1]);
  if (!definition) throw new Error(`the stored definition of ${clean.name} cannot be read`);
  return { definition, changed: reply[0] === SaveWrittenToolReply.saved };
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
  const [rev, flat] = await withScripts(redis).yiemLoadWrittenTools(keys.rev, keys.tools);
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
