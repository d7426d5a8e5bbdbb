import { createRequire, Module, register } from "node:module";
import { pathToFileURL } from "node:url";

/** The packages a tool file may import from anywhere: the running process's own copies. */
const OWN_PACKAGES = /^@yiem\/(core|tools)(\/|$)/;

/** Where a bundled process keeps its own `@yiem/core` and `@yiem/tools` (a `Symbol.for` key). */
const OWN_PACKAGES_KEY = "yiem.ownPackages";

/**
 * The ESM resolve hook, as a `data:` module so it loads the same way from the sources and from
 * `dist/` (the hooks thread has no TypeScript loader of its own). `@yiem/core` and
 * `@yiem/tools` resolve as if imported from this package, with the process's own conditions;
 * in a bundled process (`bundled`: the export names of each registered package), the packages
 * themselves resolve to a module re-exporting the bundle's copy from `globalThis`.
 */
const RESOLVE_HOOK = `
const own = ${OWN_PACKAGES.toString()};
let anchor;
let bundled;
export function initialize(data) { anchor = data.anchor; bundled = data.bundled; }
export async function resolve(specifier, context, nextResolve) {
  const names = bundled[specifier];
  if (names) return { url: reexportSource(specifier, names), shortCircuit: true };
  if (!own.test(specifier)) return nextResolve(specifier, context);
  return nextResolve(specifier, { ...context, parentURL: anchor });
}
function reexportSource(specifier, names) {
  const from = "globalThis[Symbol.for(" + JSON.stringify(${JSON.stringify(OWN_PACKAGES_KEY)}) + ")][" + JSON.stringify(specifier) + "]";
  const lines = ["const own = " + from + ";"];
  for (const name of names) {
    if (name === "default") lines.push("export default own.default;");
    else lines.push("export const " + name + " = own." + name + ";");
  }
  return "data:text/javascript," + encodeURIComponent(lines.join("\\n"));
}
`;

/** The packages a bundle registers, by name (`@yiem/core`, `@yiem/tools`): their namespaces. */
export type BundledPackages = Record<string, Record<string, unknown>>;

/**
 * Registers a bundled process's own `@yiem/core` and `@yiem/tools` (called by the bundle's
 * entry, `scripts/bundleApps.ts`, before the app's code), so tool files get these copies
 * rather than a second load of the packages. Never throws.
 *
 * @example registerBundledPackages({ "@yiem/core": core, "@yiem/tools": tools })
 */
export function registerBundledPackages(packages: BundledPackages): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(OWN_PACKAGES_KEY)] = packages;
}

/** The packages a bundled process registered; `undefined` when it runs from separate modules. */
function bundledPackages(): BundledPackages | undefined {
  return (globalThis as Record<symbol, unknown>)[Symbol.for(OWN_PACKAGES_KEY)] as
    | BundledPackages
    | undefined;
}

type ResolveFilename = (request: string, parent: unknown, ...rest: unknown[]) => string;
type Load = (request: string, parent: unknown, ...rest: unknown[]) => unknown;
type ModuleInternals = { _resolveFilename: ResolveFilename; _load: Load };

let installed: Promise<void> | undefined;

/**
 * Makes `@yiem/core` and `@yiem/tools` importable from a tool file anywhere (a folder outside
 * the repository, one with its own `node_modules`), answering with this process's own copy so
 * a tool file and the runtime share one `@yiem/core`: ESM imports through a `module.register`
 * resolve hook; CommonJS `require` (a `.cjs` file, TypeScript in a CommonJS scope, which tsx
 * compiles to it) gets the process's ESM module itself (tsx would otherwise compile a second
 * copy to CommonJS), a subpath (`@yiem/core/internal`) resolves from here. Other imports resolve
 * as Node resolves them. Installed once; later calls return the same promise.
 */
export function useOwnYiemPackages(): Promise<void> {
  installed ??= install();
  return installed;
}

async function install(): Promise<void> {
  const anchor = import.meta.url;
  const requireHere = createRequire(anchor);
  const loaded = new Map<string, unknown>();
  const bundled = bundledPackages() ?? {};
  const names = Object.fromEntries(
    Object.entries(bundled).map(([name, namespace]) => [name, Object.keys(namespace)]),
  );
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, {
    data: { anchor, bundled: names },
  });
  for (const [name, namespace] of Object.entries(bundled)) loaded.set(name, namespace);
  if (loaded.size === 0) await importOwnPackages(requireHere, loaded);
  patchRequire(requireHere, loaded);
}

/** This process's own `@yiem/core` and `@yiem/tools` (those that resolve), into `loaded`. */
async function importOwnPackages(
  requireHere: NodeRequire,
  loaded: Map<string, unknown>,
): Promise<void> {
  for (const specifier of ["@yiem/core", "@yiem/tools"]) {
    const href = pathToFileURL(requireHere.resolve(specifier)).href;
    await import(href).then(
      (namespace: unknown) => loaded.set(specifier, namespace),
      () => undefined,
    );
  }
}

/** CommonJS: `require` of an own package answers `loaded`'s copy, a subpath resolves from here. */
function patchRequire(requireHere: NodeRequire, loaded: Map<string, unknown>): void {
  const modules = Module as unknown as ModuleInternals;
  const originalLoad = modules._load;
  modules._load = function loadOwnFirst(request, parent, ...rest) {
    if (loaded.has(request)) return loaded.get(request);
    return originalLoad.call(this, request, parent, ...rest);
  };
  const originalResolve = modules._resolveFilename;
  let resolvingOwn = false; // requireHere.resolve comes back through here
  modules._resolveFilename = function resolveOwnFirst(request, parent, ...rest) {
    if (resolvingOwn || !OWN_PACKAGES.test(request)) {
      return originalResolve.call(this, request, parent, ...rest);
    }
    resolvingOwn = true;
    try {
      return requireHere.resolve(request);
    } finally {
      resolvingOwn = false;
    }
  };
}
