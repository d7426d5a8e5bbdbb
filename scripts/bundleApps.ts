/**
 * `npm run build`'s second step: bundles each long-running app's compiled entry
 * (`apps/<app>/dist/main.js`, from `tsc -b`) into one file of code, `apps/<app>/dist/main.bundle.cjs`,
 * which `apps/<app>/dist/main.bundle.js` (`scripts/bundleLoader.ts`), the entry the Dockerfile,
 * docker-compose.yml and the Kubernetes manifests run, compiles with V8's code cache. One file
 * starts a process in about two thirds of the time (no resolving, reading and linking of some
 * 1,500 modules one by one), and the code cache saves most of what is left of compiling it,
 * which is most of a replacement's time from a kill to its first answer (docs/PERFORMANCE.md,
 * "Peers").
 *
 * What stays outside the bundle: packages loaded only when first used (Bull Board, the MCP SDK,
 * re2-wasm, a YAML parser, tsx for TypeScript tool files, esbuild for locating a tool file's
 * syntax error, OpenTelemetry) and native addons. Each bundled module
 * keeps its own location: `import.meta.url`, `__dirname` and `__filename` are rewritten to the
 * module's original file, relative to the bundle, so Lua scripts, thread entry files and
 * built-in tool files resolve beside their sources as before, wherever the tree is moved to.
 * The bundle registers its own `@yiem/core` and `@yiem/tools` (`registerBundledPackages`) so a
 * tool file gets these same copies (`useOwnYiemPackages`), registers its worker threads' own
 * bundles (`BUNDLED_THREADS`, one CommonJS file each beside it: `registerBundledThreads`), and
 * tells the loader when the process is warm (`onProcessWarm`).
 *
 * Usage: `tsx scripts/bundleApps.ts` (after `tsc -b`); `--check-fresh` rebuilds only a bundle
 * older than a compiled file of the workspace or than the build's own sources.
 */
import { readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { build, type Plugin } from "esbuild";
import { BUNDLE_PARAMETERS, toBundleCode } from "./bundleCode.js";
import { readBundleKey } from "./bundleFormat.js";
import { cacheFileOf } from "./codeCacheFiles.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The apps bundled: the long-running processes whose start time a supervisor waits on. */
export const BUNDLED_APPS = ["apps/coordinator", "apps/tool-worker", "apps/gateway"] as const;

/** Loaded on first use (or never in most deployments): kept out so a start does not parse them. */
const EXTERNAL = [
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/sdk/*",
  "@bull-board/*",
  "yaml",
  "re2-wasm",
  "esbuild",
  "tsx",
  "tsx/*",
  // The API too: the SDK registers its tracer with its own copy (a bundled one saw none).
  "@opentelemetry/*",
  "msgpackr-extract",
  "playwright-core",
  "quickjs-emscripten",
  "@jitl/*",
];

/**
 * The worker threads every app's bundle carries as one CommonJS file each, beside it
 * (`apps/<app>/dist/<name>.bundle.cjs`), by name (`registerBundledThreads`): compiled entries.
 */
export const BUNDLED_THREADS = {
  aliveBeatThread: "packages/core/dist/ops/aliveBeatThread.js",
  frontDoorThread: "packages/core/dist/coordinator/http/frontDoorThread.js",
} as const;

/** The build's and the loader's sources: a bundle older than one of them is rebuilt (`--check-fresh`). */
const BUILD_SOURCES = [
  "scripts/bundleApps.ts",
  "scripts/bundleLoader.ts",
  "scripts/bundleFormat.ts",
  "scripts/bundleCode.ts",
];

/**
 * The bundle's own URL, as its code gets it from the loader. Modules refer to it rather than
 * to `import.meta.url`, which a CommonJS bundle has not.
 */
const BUNDLE_URL = BUNDLE_PARAMETERS.url;

/**
 * Modules a bundled dependency requires as it loads, which a start does not need:
 * - `@opentelemetry/api`, which prom-client requires for exemplars only: outside the bundle
 *   (`EXTERNAL`), its 60-odd files took some 18 ms of a coordinator's start. Required at its
 *   first use instead (`lazy`: a proxy whose first property read requires it).
 * - `msgpackr-extract`, msgpackr's optional native string extractor, which speeds up unpacking
 *   only: BullMQ's only use of msgpackr is packing (its scripts unpack), so the bundle's copy
 *   goes without it (`absent`; a tool's own msgpackr loads from its `node_modules`, as before).
 * - `cron-parser` (and the luxon it requires), which BullMQ requires for repeatable jobs and
 *   job schedulers, neither of which Yiem makes: required at its first use (`lazy`).
 */
const START_SKIPPED_REQUIRES: ReadonlyArray<{
  importer: RegExp;
  module: string;
  as: "lazy" | "absent";
}> = [
  { importer: /[\\/]prom-client[\\/]/, module: "@opentelemetry/api", as: "lazy" },
  { importer: /[\\/]msgpackr[\\/]/, module: "msgpackr-extract", as: "absent" },
  { importer: /[\\/]bullmq[\\/]/, module: "cron-parser", as: "lazy" },
];

/** Makes the requires of `START_SKIPPED_REQUIRES` lazy, or answers them with nothing. */
function skipStartRequires(): Plugin {
  const names = START_SKIPPED_REQUIRES.map((entry) => entry.module.replace(/[/.-]/g, "\\$&"));
  const filter = new RegExp(`^(${names.join("|")})$`);
  return {
    name: "yiem-skip-start-requires",
    setup(build) {
      build.onResolve({ filter }, (args) => {
        if (args.namespace !== "file") return undefined;
        const skipped = START_SKIPPED_REQUIRES.find(
          (entry) => entry.module === args.path && entry.importer.test(args.importer),
        );
        return (
          skipped && {
            path: `${skipped.as}:${skipped.module}`,
            namespace: "yiem-skipped",
            pluginData: skipped,
          }
        );
      });
      build.onLoad({ filter: /.*/, namespace: "yiem-skipped" }, (args) => {
        const { as, module } = args.pluginData as (typeof START_SKIPPED_REQUIRES)[number];
        if (as === "absent") return { contents: "module.exports = undefined;", loader: "js" };
        const load = `let loaded;\nconst load = () => (loaded ??= require(${JSON.stringify(module)}));`;
        const proxy =
          "module.exports = new Proxy({}, { get: (_t, key) => load()[key], has: (_t, key) => key in load() });";
        return { contents: `${load}\n${proxy}`, loader: "js", resolveDir: ROOT };
      });
    },
  };
}

/**
 * Packages that several workspace packages depend on at the same version but npm installed
 * once per package (a root dependency holds another version): the bundle takes one copy, the
 * first workspace package's, instead of one per importer. `undici` (6.x in `@yiem/core` and
 * `@yiem/tools`, 7.x at the root for the tests): some 570 KB less code for every start to read.
 */
const SHARED_PACKAGES = ["undici"];

/**
 * Resolves each of `SHARED_PACKAGES`, imported by name, to the copy `packages/core` gets, when
 * the importer's own copy is the same version; a different version keeps its own copy.
 */
function shareWorkspaceCopies(): Plugin {
  const filter = new RegExp(`^(${SHARED_PACKAGES.join("|")})$`);
  const versionOf = async (entry: string) => {
    const manifest = join(entry.slice(0, entry.lastIndexOf("node_modules")), "node_modules");
    const [scope = "", rest = ""] = entry.slice(manifest.length + 1).split(/[\\/]/);
    const name = scope.startsWith("@") ? join(scope, rest) : scope;
    return JSON.parse(await readFile(join(manifest, name, "package.json"), "utf8")).version;
  };
  return {
    name: "yiem-share-workspace-copies",
    setup(build) {
      build.onResolve({ filter }, async (args) => {
        if (args.pluginData === "shared") return undefined;
        const shared = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: join(ROOT, "packages", "core"),
          pluginData: "shared",
        });
        const own = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          pluginData: "shared",
        });
        if (shared.errors.length > 0 || own.errors.length > 0) return undefined;
        if (own.path === shared.path) return undefined;
        const same = (await versionOf(own.path)) === (await versionOf(shared.path));
        return same ? { path: shared.path } : undefined;
      });
    },
  };
}

/**
 * Rewrites each module's `import.meta.url`, `__dirname` and `__filename` to its original file,
 * as a path relative to the bundle resolved at run time (the bundle's own `import.meta.url`).
 */
function keepModuleLocations(bundleDir: string): Plugin {
  return {
    name: "keep-module-locations",
    setup(builder) {
      builder.onLoad({ filter: /\.(m|c)?js$/ }, async (args) => {
        const original = await readFile(args.path, "utf8");
        const rel = relative(bundleDir, args.path);
        const here = `new URL(${JSON.stringify(rel)}, ${BUNDLE_URL})`;
        let text = original;
        if (text.includes("import.meta.url")) {
          text = text.replaceAll("import.meta.url", `${here}.href`);
        }
        if (/\b__(dirname|filename)\b/.test(text)) {
          const dir = `new URL(${JSON.stringify(`${dirname(rel)}/`)}, ${BUNDLE_URL})`;
          text = `var __filename = decodeURIComponent(${here}.pathname); var __dirname = decodeURIComponent(${dir}.pathname).replace(/\\/$/, "");\n${text}`;
        }
        return { contents: text, loader: "js", resolveDir: dirname(args.path) };
      });
    },
  };
}

/**
 * The module that registers the bundle's own packages, evaluated before the app's code, and
 * tells the loader (`scripts/bundleLoader.ts`) when the process is warm.
 */
function registrationModule(): string {
  return [
    `import * as core from "@yiem/core";`,
    `import { onProcessWarm, registerBundledPackages, withV8FlagsAsStarted } from "@yiem/core/internal";`,
    `import { registerBundledThreads } from "@yiem/core/internal";`,
    `import * as tools from "@yiem/tools";`,
    `registerBundledPackages({ "@yiem/core": core, "@yiem/tools": tools });`,
    `registerBundledThreads({ ${Object.keys(BUNDLED_THREADS)
      .map((name) => `${name}: new URL(${JSON.stringify(threadFileOf(name))}, ${BUNDLE_URL})`)
      .join(", ")} });`,
    `${BUNDLE_PARAMETERS.loader}.writeCachesThrough(withV8FlagsAsStarted);`,
    `onProcessWarm(() => ${BUNDLE_PARAMETERS.loader}.warm());`,
  ].join("\n");
}

/** The file name of thread `name`'s bundle, beside the app's. */
function threadFileOf(name: string): string {
  return `./${name}.bundle.cjs`;
}

/**
 * Bundles each of `BUNDLED_THREADS` into one CommonJS file beside the app's bundle: a worker
 * thread started from it resolves and links no module one by one and starts no ES module
 * loader. Modules keep their locations as in the app's bundle (`keepModuleLocations`), against
 * the thread file's own URL.
 */
async function bundleThreads(dist: string): Promise<void> {
  for (const [name, entry] of Object.entries(BUNDLED_THREADS)) {
    const result = await build({
      entryPoints: [join(ROOT, entry)],
      write: false,
      outfile: join(dist, threadFileOf(name)),
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      minifyWhitespace: true,
      minifySyntax: true,
      keepNames: true,
      legalComments: "none",
      external: EXTERNAL,
      banner: { js: `var ${BUNDLE_URL} = require("node:url").pathToFileURL(__filename).href;` },
      plugins: [keepModuleLocations(dist)],
      logLevel: "warning",
    });
    await writeWhole(join(dist, threadFileOf(name)), result.outputFiles[0]?.text ?? "");
  }
}

/** The bundle's entry: the registration first, then the app's `main.js` (imports run in order). */
const ENTRY = `import "./main.bundle-own.js";\nimport "./main.js";\n`;

/**
 * Writes the `build` tier of the bundle's code cache (`scripts/bundleLoader.ts`): the code
 * compiled, not run, by this Node; a process started by another Node ignores it.
 */
async function writeBuildCache(dist: string, code: string): Promise<void> {
  const key = readBundleKey(code);
  if (key === undefined) throw new Error(`${dist}: the bundle's code names no key`);
  const script = new Script(code, { filename: join(dist, "main.bundle.cjs") });
  await writeWhole(cacheFileOf(dist, key, "build"), script.createCachedData());
}

/** Writes `text` to `file` through a file of its own renamed into place: a reader sees one whole file. */
async function writeWhole(file: string, text: string | Uint8Array): Promise<void> {
  const own = `${file}.${process.pid}.tmp`;
  await writeFile(own, text);
  await rename(own, file);
}

/** Removes the code caches of earlier builds (`main.bundle.*.v8cache`, and any left half-written). */
async function removeOldCaches(dist: string): Promise<void> {
  const names = await readdir(dist);
  const old = names.filter((name) => /^main\.bundle\..*\.v8cache(\..*\.tmp)?$/.test(name));
  await Promise.all(old.map((name) => rm(join(dist, name), { force: true })));
}

/**
 * Bundles one app: its code into `apps/<app>/dist/main.bundle.cjs` (one CommonJS function, see
 * `toBundleCode`), the loader that runs it into `main.bundle.js` (the command every deployment
 * runs), and the `build` tier of its code cache. One file of code, no chunks: esbuild's split
 * chunks gave a CommonJS package imported with `import()` (bullmq, in the client) no named
 * exports; what is imported only when first used stays outside instead (`EXTERNAL`).
 */
async function bundleApp(app: string): Promise<void> {
  const dist = join(ROOT, app, "dist");
  const entry = join(dist, "main.bundle-entry.js");
  const registration = join(dist, "main.bundle-own.js");
  await writeFile(registration, registrationModule());
  await writeFile(entry, ENTRY);
  const result = await build({
    entryPoints: [entry],
    write: false,
    outfile: join(dist, "main.bundle.cjs"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    splitting: false,
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: "none",
    charset: "ascii",
    external: EXTERNAL,
    plugins: [skipStartRequires(), shareWorkspaceCopies(), keepModuleLocations(dist)],
    logLevel: "warning",
  });
  await Promise.all([rm(entry), rm(registration)]);
  const code = await toBundleCode(result.outputFiles[0]?.text ?? "", app);
  await removeOldCaches(dist);
  await writeWhole(join(dist, "main.bundle.cjs"), code);
  await writeWhole(join(dist, "main.bundle.js"), await buildLoader());
  await bundleThreads(dist);
  await writeBuildCache(dist, code);
}

/** The loader (`scripts/bundleLoader.ts`) as one ES module: every app's `main.bundle.js`. */
async function buildLoader(): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, "scripts", "bundleLoader.ts")],
    write: false,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    legalComments: "none",
    // The loader's `import()` is the bundle's, of whatever it is asked for at run time.
    logOverride: { "unsupported-dynamic-import": "silent" },
    logLevel: "warning",
  });
  return result.outputFiles[0]?.text ?? "";
}

/** The newest modification time of the workspace's compiled files (`dist` folders) and the build's sources. */
async function newestCompiled(): Promise<number> {
  const compiled = ["packages/core", "packages/tools", ...BUNDLED_APPS].map((dir) =>
    join(dir, "tsconfig.tsbuildinfo"),
  );
  const infos = [...compiled, ...BUILD_SOURCES].map((file) =>
    stat(join(ROOT, file)).catch(() => undefined),
  );
  return Math.max(0, ...(await Promise.all(infos)).map((info) => info?.mtimeMs ?? 0));
}

/** Whether `app`'s bundle exists and is newer than every compiled file of the workspace. */
async function isFresh(app: string, newest: number): Promise<boolean> {
  const info = await stat(join(ROOT, app, "dist", "main.bundle.cjs")).catch(() => undefined);
  return info !== undefined && info.mtimeMs >= newest;
}

async function main(): Promise<void> {
  const onlyStale = process.argv.includes("--check-fresh");
  const newest = onlyStale ? await newestCompiled() : 0;
  for (const app of BUNDLED_APPS) {
    if (onlyStale && (await isFresh(app, newest))) continue;
    await bundleApp(app);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
