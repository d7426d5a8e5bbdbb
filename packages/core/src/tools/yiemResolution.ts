import { createRequire, Module, register } from "node:module";

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

let installed = false;

/**
 * Makes `@yiem/core` and `@yiem/tools` importable from a tool file anywhere (a folder outside
 * the repository, one with its own `node_modules`): ESM imports through a `module.register`
 * resolve hook, CommonJS `require` (TypeScript files in a CommonJS scope compile to it)
 * through Node's resolver, both answering with this process's own copy, so a tool file and
 * the runtime share one `@yiem/core`. Other imports resolve as Node resolves them. Idempotent.
 */
export function useOwnYiemPackages(): void {
  if (installed) return;
  installed = true;
  const anchor = import.meta.url;
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, { data: { anchor } });
  const requireHere = createRequire(anchor);
  const modules = Module as unknown as { _resolveFilename: ResolveFilename };
  const original = modules._resolveFilename;
  let resolvingOwn = false; // requireHere.resolve comes back through here
  modules._resolveFilename = function resolveOwnFirst(request, parent, ...rest) {
    if (resolvingOwn || !OWN_PACKAGES.test(request)) {
      return original.call(this, request, parent, ...rest);
    }
    resolvingOwn = true;
    try {
      return requireHere.resolve(request);
    } finally {
      resolvingOwn = false;
    }
  };
}
