/**
 * The Redis keys of written tools under `prefix`. They share the hash tag `{writtenTools}`,
 * so the save script may touch them together on a Redis Cluster too.
 */
export function writtenToolKeys(prefix: string) {
  const base = `${prefix}:{writtenTools}`;
  return {
    /** HASH: name → JSON of the current `WrittenToolDefinition`. */
    tools: base,
    /** LIST: the hash of every version of `name`, oldest first (its length is the version). */
    history: (name: string) => `${base}:history:${name}`,
    /** HASH: hash → canonical JSON of that `WrittenToolSpec` (content-addressed). */
    blobs: `${base}:blobs`,
    /** STRING counter, bumped by every save that changes something. */
    rev: `${base}:rev`,
  };
}
