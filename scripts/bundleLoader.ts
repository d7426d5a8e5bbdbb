/**
 * The entry of each bundled app, `apps/<app>/dist/main.bundle.js` (`scripts/bundleApps.ts`
 * builds it from this file): it runs the app's code, `main.bundle.cjs` beside it (one CommonJS
 * function, `scripts/bundleFormat.ts`), through `vm.Script` with V8's code cache, so a process
 * does not compile again what an earlier one compiled. Node 20 keeps no compile cache of its
 * own (`module.enableCompileCache` came in 22.1), and takes none for ES modules.
 *
 * The cache files sit beside the code (`scripts/codeCacheFiles.ts`), named by the code's key
 * (the hash its first line names, so a process never reads the cache of other code: V8 itself
 * checks only the code's length), the Node version and the tier. A process reads the best tier
 * there is and writes a better one when it gets there: `start` `START_TIER_MS` after it
 * started, unless it did a piece of work by then; `warm` once it did its first (the bundle's
 * `onProcessWarm`: a coordinator's first run, a tool worker's first call), with every function
 * compiled by then, those of a run included. Nothing is written while V8's flags differ from
 * those the process started with (a new process would reject the cache): the app writes
 * through `writeCachesThrough`, which sets back what it changed (`withV8FlagsAsStarted`).
 * Whatever goes wrong with a cache (none, a read-only folder, another Node) only costs the
 * compile it would have saved.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { readBundleKey } from "./bundleFormat.js";
import { CACHE_TIERS, type CacheTier, readBestCache, writeCache } from "./codeCacheFiles.js";

/** Runs `write` as it must run: with V8's flags as the process started. */
type AroundWrite = <T>(write: () => T) => T;

/** What the app's code gets from its loader (the bundle's registration module calls it). */
export interface BundleLoader {
  /** Says the process did its first piece of work: what it compiled is worth keeping. */
  warm(): void;
  /**
   * Runs every cache write through `around`, which runs it with V8's flags as the process
   * started (`withV8FlagsAsStarted`, for a process that sets one at run time).
   */
  writeCachesThrough(around: AroundWrite): void;
}

/** The app's code: the function of `scripts/bundleFormat.ts`. */
type BundleFunction = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  bundleURL: string,
  loader: BundleLoader,
  importModule: (specifier: string, options?: ImportCallOptions) => Promise<unknown>,
) => void;

/** How long after its start a process that did no work yet writes the `start` tier. */
const START_TIER_MS = 10_000;

/** How long after the process said it is warm the `warm` tier is written (its answer first). */
const WARM_WRITE_DELAY_MS = 500;

const CODE_FILE = fileURLToPath(new URL("./main.bundle.cjs", import.meta.url));

/**
 * The code cache of a one-character script: it differs from one taken at the start only in
 * the hash of V8's flags, so comparing the two tells whether they changed.
 */
function flagsProbe(): Buffer {
  return new Script("0", { filename: "yiem-flags-probe" }).createCachedData();
}

/**
 * Compiles and runs the app's code with the best cache there is, and writes a better tier
 * later: `start` after `START_TIER_MS`, `warm` when the app says it is warm.
 */
function runBundle(): void {
  const code = readFileSync(CODE_FILE, "latin1"); // ASCII, checked at build
  const key = readBundleKey(code);
  const dir = dirname(CODE_FILE);
  const cached = key === undefined ? {} : readBestCache(dir, key);
  const script = new Script(code, {
    filename: CODE_FILE,
    ...(cached.data ? { cachedData: cached.data } : {}),
  });
  const had = cached.tier && !script.cachedDataRejected ? CACHE_TIERS.indexOf(cached.tier) : -1;
  const startProbe = flagsProbe();
  let around: AroundWrite = (write) => write();
  let warmed = false;
  const writeAbove = (tier: CacheTier) => {
    if (key === undefined || CACHE_TIERS.indexOf(tier) <= had) return;
    const unchanged = () => flagsProbe().equals(startProbe);
    const data = around(() => (unchanged() ? script.createCachedData() : undefined));
    if (data) void writeCache(dir, key, tier, data);
  };
  const loader: BundleLoader = {
    warm() {
      if (warmed) return;
      warmed = true;
      setTimeout(() => writeAbove("warm"), WARM_WRITE_DELAY_MS).unref();
    },
    writeCachesThrough(given) {
      around = given;
    },
  };
  setTimeout(() => warmed || writeAbove("start"), START_TIER_MS).unref();
  const run = script.runInThisContext() as BundleFunction;
  const module = { exports: {} };
  const require = createRequire(new URL("./main.js", import.meta.url));
  run(
    module.exports,
    require,
    module,
    import.meta.url,
    loader,
    (specifier, options) => import(specifier, options),
  );
}

runBundle();
