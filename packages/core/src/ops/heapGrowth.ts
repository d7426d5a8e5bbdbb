import { setFlagsFromString } from "node:v8";

/** The `--heap-growing-percent` this process set (`limitHeapGrowth`); 0 while V8's own holds. */
let applied = 0;

/**
 * Caps how far V8 lets the heap grow past what was live after a full garbage collection
 * before it collects again: at most `percent` % more (`--heap-growing-percent`). A process
 * that holds thousands of sessions at once promotes much short-lived state to the old
 * generation; V8's own factor (up to 4×) then lets that garbage pile up in memory. Applied at
 * run time (V8 reads it at each collection), so the process's command line stays `node
 * …/main.js` wherever it runs. Call it once, first thing; 0 leaves V8's own factor.
 * Never throws.
 *
 * @example limitHeapGrowth(readClusterConfig().heapGrowthPercent);
 */
export function limitHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent <= 0) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  applied = percent;
}

/**
 * Runs `fn` with V8's flags as the process started: without the `--heap-growing-percent`
 * `limitHeapGrowth` set, which is set again after. V8 stamps a code cache with a hash of the
 * flags set, and a new process, which has not set it yet when it compiles, rejects a cache
 * stamped with it: a bundled app's loader writes its code cache through this
 * (`scripts/bundleLoader.ts`).
 *
 * @example const data = withV8FlagsAsStarted(() => script.createCachedData());
 */
export function withV8FlagsAsStarted<T>(fn: () => T): T {
  if (applied === 0) return fn();
  setFlagsFromString("--heap-growing-percent=0"); // V8's default: left out of the hash
  try {
    return fn();
  } finally {
    setFlagsFromString(`--heap-growing-percent=${applied}`);
  }
}
