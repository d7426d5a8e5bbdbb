import { type Stats, unwatchFile, watchFile } from "node:fs";
import type { Logger } from "@yiem/core";
import type { FileKeyRing } from "./authenticate.js";
import { loadKeysFile } from "./keysFile.js";

/** How often the keys file's metadata is looked at (ms): a revoked key stops within about this. */
export const KEYS_FILE_CHECK_MS = 1000;

/** True when the file at `current` differs from `previous` (written, replaced, or gone). */
function hasChanged(current: Stats, previous: Stats): boolean {
  return (
    current.mtimeMs !== previous.mtimeMs ||
    current.ctimeMs !== previous.ctimeMs ||
    current.size !== previous.size ||
    current.ino !== previous.ino
  );
}

/**
 * Reads the keys file `file` again whenever it changes (its metadata is looked at every
 * `intervalMs`; a file replaced by a rename counts, as editors and config managers write),
 * and serves its keys from then on: a key taken out of it gets 401 on its next request, a key
 * added works, a changed entry (scopes, limits) applies, without a restart. A file that cannot
 * be used (bad JSON, a bad entry, a name used twice, gone) leaves the last good keys in place
 * and logs an error naming the line and field; the next good version is taken. Returns a
 * function that stops watching.
 *
 * @example const stop = watchKeysFile("/etc/yiem/keys.jsonl", ring, log); // … stop();
 */
export function watchKeysFile(
  file: string,
  ring: FileKeyRing,
  log: Logger,
  intervalMs = KEYS_FILE_CHECK_MS,
): () => void {
  const reload = (current: Stats, previous: Stats) => {
    if (!hasChanged(current, previous)) return;
    try {
      ring.replace(loadKeysFile(file));
      log.info({ file, keys: ring.names() }, "keys file read again");
    } catch (err) {
      log.error(
        { file, err: (err as Error).message, keys: ring.names() },
        "keys file unusable: keeping the last good keys",
      );
    }
  };
  watchFile(file, { interval: intervalMs, persistent: false }, reload);
  return () => unwatchFile(file, reload);
}
