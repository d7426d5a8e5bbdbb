/**
 * The format of a bundled app's code file, `apps/<app>/dist/main.bundle.cjs`, shared by the
 * build (`scripts/bundleApps.ts`) and the loader that runs it (`scripts/bundleLoader.ts`): a
 * first line naming the code's key, then one function expression of
 * `(exports, require, module, bundleURL, loader, importModule)`.
 */

/** The key's line: `/*yiem-bundle <key>*\/`, the key being 16 hex digits. */
const KEY_LINE = /^\/\*yiem-bundle ([0-9a-f]{16})\*\/\n/;

/** The key's line for `key` (the first line of the code file). */
export function bundleKeyLine(key: string): string {
  return `/*yiem-bundle ${key}*/\n`;
}

/**
 * The key the code file names in its first line: the hash of the code after it, which names
 * its cache files; `undefined` for a file without one.
 */
export function readBundleKey(code: string): string | undefined {
  return KEY_LINE.exec(code.slice(0, 64))?.[1];
}
