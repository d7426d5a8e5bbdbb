import { createRequire, Module, register } from "node:module";
import { pathToFileURL } from "node:url";

/** The packages a tool file may import from anywhere: the running process's own copies. */
const OWN_PACKAGES = /^@yiem\/(core|tools)(\/|$)/;

/**
 * The ESM resolve hook, as a `data:` module so it loads the same way from the sources and from
 * `dist/` (the hooks thread has no TypeScript loader of its own). `@yiem/core` and
 * `@yiem/tools` resolve as if imported from this package, with the process's own conditions.
 */
const RESOLVE_HOOK = `
const own = ${OWN_PACKAGES.toString()};
let anchor;
export function initialize(data) { anchor = data.anchor; }
export async function resolve(specifier, context, nextResolve) {
  if (!own.test(specifier)) return nextResolve(specifier, context);
  return nextResolve(specifier, { ...context, parentURL: anchor });
}
`;

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
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, { data: { anchor } });
  const requireHere = createRequire(anchor);
  const modules = Module as unknown as ModuleInternals;
  const loaded = new Map<string, unknown>();
  for (const specifier of ["@yiem/core", "@yiem/tools"]) {
    const href = pathToFileURL(requireHere.resolve(specifier)).href;
    await import(href).then(
      (namespace: unknown) => loaded.set(specifier, namespace),
      () => undefined,
    );
  }
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
