/**
 * `npm run test:durations`: refreshes `test/fileDurations.json`, the seconds each slow test
 * file took, whose files vitest starts first, the longest first (`test/support/longestFirst.ts`).
 * Reads vitest's cache of its last runs (`node_modules/.vite/vitest/<project>/results.json`,
 * each file's duration in its latest run): a file that passed in `SLOW_SECONDS` or more is
 * written with its seconds, one that passed faster is dropped, one the cache does not know
 * (or that failed) keeps its entry. Run it after `npm test`, or after the folders whose files
 * changed (`npx vitest run test/faults`): seconds from one machine, compared with each other.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FileDurations,
  fileDurationsPath,
  readFileDurations,
} from "../test/support/fileDurations.js";

/** A file this slow or slower is listed. */
const SLOW_SECONDS = 5;

const ABOUT =
  "Seconds each test file of 5 s or more took (one machine, one run each). Vitest starts these files first, the longest first (test/support/longestFirst.ts), so that no long file ends the suite alone. npm run test:durations refreshes it from vitest's cache of the last runs.";

const cacheDir = fileURLToPath(new URL("../node_modules/.vite/vitest/", import.meta.url));

/** One file's last result in vitest's cache. */
type CachedResult = [key: string, result: { duration?: number; failed?: boolean }];

/** The last result of each file vitest's cache holds, by path (`test/…`), from every project. */
function readCachedResults(): Map<string, CachedResult[1]> {
  const results = new Map<string, CachedResult[1]>();
  if (!existsSync(cacheDir)) return results;
  for (const project of readdirSync(cacheDir)) {
    const file = join(cacheDir, project, "results.json");
    if (!existsSync(file)) continue;
    const cached = JSON.parse(readFileSync(file, "utf8")) as { results: CachedResult[] };
    for (const [key, result] of cached.results)
      results.set(key.slice(key.indexOf(":") + 1), result);
  }
  return results;
}

/** The listed seconds once the cache's passed files are taken in, longest first. */
function mergeDurations(
  listed: Record<string, number>,
  cached: Map<string, CachedResult[1]>,
): Record<string, number> {
  const merged = new Map(Object.entries(listed));
  for (const [path, result] of cached) {
    if (result.failed || result.duration === undefined) continue;
    const seconds = Math.round(result.duration / 1000);
    if (seconds >= SLOW_SECONDS) merged.set(path, seconds);
    else merged.delete(path);
  }
  return Object.fromEntries([...merged].sort(([, a], [, b]) => b - a));
}

const cached = readCachedResults();
if (cached.size === 0) {
  console.error(`no vitest results cached in ${cacheDir}: run the tests first`);
  process.exit(1);
}
const durations: FileDurations = {
  about: ABOUT,
  seconds: mergeDurations(readFileDurations(), cached),
};
writeFileSync(fileDurationsPath, `${JSON.stringify(durations, null, 2)}\n`);
console.log(
  `${Object.keys(durations.seconds).length} files of ${SLOW_SECONDS} s or more in test/fileDurations.json`,
);
