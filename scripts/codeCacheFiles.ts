/**
 * The code cache files of a bundled app, beside its code (`scripts/bundleLoader.ts` reads and
 * writes them): `main.bundle.<key>.<node version>-<arch>.<tier>.v8cache`, one per code, Node
 * and tier.
 */
import { readFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * A cache's tier, worst first, each holding more compiled code than the one before: `build`,
 * the code compiled and not run (`scripts/bundleApps.ts`); `start`, what a process compiled in
 * its first seconds; `warm`, what it compiled up to its first piece of work done.
 */
export const CACHE_TIERS = ["build", "start", "warm"] as const;

/** One of `CACHE_TIERS`. */
export type CacheTier = (typeof CACHE_TIERS)[number];

/** The cache file of `tier` for the code of `key`, in `dir`, for this Node. */
export function cacheFileOf(dir: string, key: string, tier: CacheTier): string {
  return join(dir, `main.bundle.${key}.${process.version}-${process.arch}.${tier}.v8cache`);
}

/** The best cache in `dir` for the code of `key`, and its tier; none when none can be read. */
export function readBestCache(dir: string, key: string): { data?: Buffer; tier?: CacheTier } {
  for (const tier of [...CACHE_TIERS].reverse()) {
    try {
      return { data: readFileSync(cacheFileOf(dir, key, tier)), tier };
    } catch {
      // none of this tier: try the next
    }
  }
  return {};
}

/**
 * Writes `data` as the cache of `tier`: to a file of its own first (its pid and a time in its
 * name), then renamed into place, so a process reading it meanwhile, or another writing it at
 * once, never leaves half a file there. Never throws: a folder it cannot write to (a
 * read-only image) leaves no cache and no file behind.
 */
export async function writeCache(
  dir: string,
  key: string,
  tier: CacheTier,
  data: Uint8Array,
): Promise<void> {
  const file = cacheFileOf(dir, key, tier);
  const own = `${file}.${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(own, data, { flag: "wx" });
    await rename(own, file);
  } catch {
    await rm(own, { force: true }).catch(() => undefined);
  }
}
