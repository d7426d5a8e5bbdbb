import type { RedisClient } from "../redis/redisConnection.js";
import type { JsonSchema } from "../types/index.js";

/** What a written tool is made of: what the model supplies to `writeTool`. */
export interface WrittenToolSpec {
  /** An identifier: `^[A-Za-z_][A-Za-z0-9_]{0,63}$`. */
  name: string;
  label: string;
  description: string;
  /** JSON Schema of the tool's arguments (`type: "object"`). */
  inputSchema: JsonSchema;
  /** The body of `function (args) { … }`, JavaScript, run in the sandbox. */
  code: string;
  /** May run concurrently with the other calls of its batch (on the tool workers). */
  parallel: boolean;
}

/** A stored version of a written tool. */
export interface WrittenToolDefinition extends WrittenToolSpec {
  /** sha256 (hex) of the canonical JSON of the spec; same content, same hash. */
  hash: string;
  /** 1 for the first version of this name, then 2, 3, … for each change of content. */
  version: number;
  /** When this version was saved (ISO 8601). */
  writtenAt: string;
}

/** The connection written tools are stored through: a single Redis or a Redis Cluster. */
export type WrittenToolsRedis = RedisClient;
