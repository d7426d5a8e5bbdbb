import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { namesOwnPackages } from "./namesOwnPackages.js";
import { useOwnYiemPackages } from "./yiemResolution.js";

const TYPESCRIPT_FILE = /\.[cm]?ts$/;

type TsImport = (specifier: string, parentURL: string) => Promise<unknown>;
let tsImport: Promise<TsImport> | undefined;

/**
 * tsx's scoped importer, loaded on the first TypeScript file only: one namespace for every
 * tool file (one loader registered, not one per file; each file is still its own module).
 */
function loadTsImport(): Promise<TsImport> {
  // Own packages' hook first: registered after tsx's, it would resolve `@yiem/core` outside
  // tsx's namespace (a TypeScript source, in this repository, then fails to load).
  tsImport ??= useOwnYiemPackages().then(async () => {
    const api = await import("tsx/esm/api");
    const scoped = api.register({ namespace: "yiem-tool-files" });
    return scoped.import as TsImport;
  });
  return tsImport;
}

/**
 * Imports one tool file as its own module: TypeScript (`.ts`, `.mts`) through tsx's scoped
 * loader (which only ever transforms what this import reaches, and on Node 20 under any start
 * command, compiled `node …/dist/main.js` included), JavaScript (`.js`, `.mjs`, `.cjs`)
 * natively. `@yiem/core` and `@yiem/tools` resolve to this process's copies: the resolve hook
 * is installed when `ownPackages` says the file's folder names them, or, without it, when
 * `namesOwnPackages` finds so. Throws what the import threw.
 */
export async function importToolFile(
  path: string,
  ownPackages?: boolean,
): Promise<Record<string, unknown>> {
  if (ownPackages ?? (await namesOwnPackages(dirname(path)))) await useOwnYiemPackages();
  const url = pathToFileURL(path).href;
  if (!TYPESCRIPT_FILE.test(path)) return (await import(url)) as Record<string, unknown>;
  const importTs = await loadTsImport();
  return (await importTs(url, import.meta.url)) as Record<string, unknown>;
}
