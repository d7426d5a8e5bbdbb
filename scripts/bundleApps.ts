/**
 * `npm run build`'s second step: bundles each long-running app's compiled entry
 * (`apps/<app>/dist/main.js`, from `tsc -b`) into one file, `apps/<app>/dist/main.bundle.js`,
 * which the Dockerfile, docker-compose.yml and the Kubernetes manifests run. One file starts a
 * process in about two thirds of the time (no resolving, reading and linking of some 1,500
 * modules one by one), which is most of a replacement's time from a kill to its first answer
 * (docs/PERFORMANCE.md, "Peers").
 *
 * What stays outside the bundle: packages loaded only when first used (Bull Board, the MCP SDK,
 * re2-wasm, a YAML parser, tsx for TypeScript tool files, esbuild for locating a tool file's
 * syntax error, OpenTelemetry) and native addons. Each bundled module
 * keeps its own location: `import.meta.url`, `__dirname` and `__filename` are rewritten to the
 * module's original file, relative to the bundle, so Lua scripts, thread entry files and
 * built-in tool files resolve beside their sources as before, wherever the tree is moved to.
 * The bundle registers its own `@yiem/core` and `@yiem/tools` (`registerBundledPackages`) so a
 * tool file gets these same copies (`useOwnYiemPackages`).
 *
 * Usage: `tsx scripts/bundleApps.ts` (after `tsc -b`); `--check-fresh` rebuilds only a bundle
 * older than a compiled file of the workspace.
 */
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

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
 * The banner's name for the bundle's own URL. Modules refer to it rather than to
 * `import.meta.url`, which would make esbuild take a CommonJS module for an ES module.
 */
const BUNDLE_URL = "__yiemBundleURL";

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

/** The module that registers the bundle's own packages, evaluated before the app's code. */
function registrationModule(): string {
  return [
    `import * as core from "@yiem/core";`,
    `import { registerBundledPackages } from "@yiem/core/internal";`,
    `import * as tools from "@yiem/tools";`,
    `registerBundledPackages({ "@yiem/core": core, "@yiem/tools": tools });`,
  ].join("\n");
}

/** The bundle's entry: the registration first, then the app's `main.js` (imports run in order). */
const ENTRY = `import "./main.bundle-own.js";\nimport "./main.js";\n`;

/**
 * Bundles one app into `apps/<app>/dist/main.bundle.js`. One file, no chunks: esbuild's split
 * chunks gave a CommonJS package imported with `import()` (bullmq, in the client) no named
 * exports; what is imported only when first used stays outside instead (`EXTERNAL`).
 */
async function bundleApp(app: string): Promise<void> {
  const dist = join(ROOT, app, "dist");
  const entry = join(dist, "main.bundle-entry.js");
  const registration = join(dist, "main.bundle-own.js");
  await writeFile(registration, registrationModule());
  await writeFile(entry, ENTRY);
  const requireAnchor = `new URL("main.js", ${BUNDLE_URL})`;
  await build({
    entryPoints: { "main.bundle": entry },
    outdir: dist,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    splitting: false,
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: "none",
    external: EXTERNAL,
    // CommonJS modules inside the bundle call `require` for Node's built-ins.
    banner: {
      js: `import { createRequire as __yiemCreateRequire } from "node:module"; const ${BUNDLE_URL} = import.meta.url; const require = __yiemCreateRequire(${requireAnchor});`,
    },
    plugins: [keepModuleLocations(dist)],
    logLevel: "warning",
  });
  await Promise.all([rm(entry), rm(registration)]);
}

/** The newest modification time of the workspace's compiled files (`dist` folders). */
async function newestCompiled(): Promise<number> {
  const infos = ["packages/core", "packages/tools", ...BUNDLED_APPS].map((dir) =>
    stat(join(ROOT, dir, "tsconfig.tsbuildinfo")).catch(() => undefined),
  );
  return Math.max(0, ...(await Promise.all(infos)).map((info) => info?.mtimeMs ?? 0));
}

/** Whether `app`'s bundle exists and is newer than every compiled file of the workspace. */
async function isFresh(app: string, newest: number): Promise<boolean> {
  const info = await stat(join(ROOT, app, "dist", "main.bundle.js")).catch(() => undefined);
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
