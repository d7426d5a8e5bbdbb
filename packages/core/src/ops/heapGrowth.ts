import { setFlagsFromString } from "node:v8";

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
}
