/**
 * Turns esbuild's CommonJS output for one app into the code file the loader runs
 * (`scripts/bundleFormat.ts`): dynamic imports routed to the loader, wrapped in one strict
 * function, checked to be ASCII, and keyed by its hash.
 */
import { createHash } from "node:crypto";
import { init as initLexer, parse as lexImports } from "es-module-lexer";
import { bundleKeyLine } from "./bundleFormat.js";

/** The names under which the bundle's code gets what the loader hands it, in order. */
export const BUNDLE_PARAMETERS = {
  /** The bundle's own URL (the loader's): what each module's location is resolved against. */
  url: "__yiemBundleURL",
  /** The loader (`BundleLoader` in `scripts/bundleLoader.ts`). */
  loader: "__yiemLoader",
  /** The loader's `import()` (see `routeDynamicImports`). */
  importModule: "__yiemImport",
} as const;

/**
 * Makes every `import()` left in the code (of what stays outside the bundle, or of a path
 * known only at run time) a call of the loader's own `import()`, which resolves from the
 * bundle's folder as the ES module bundle did: code that `vm.Script` compiled from V8's code
 * cache has lost, on Node 20, what its own `import()` needs ("A dynamic import callback was not
 * specified"). Found with es-module-lexer, so an `import(` in a string or a comment stays.
 */
async function routeDynamicImports(code: string, app: string): Promise<string> {
  await initLexer;
  const [imports] = lexImports(code);
  let routed = "";
  let at = 0;
  for (const found of imports) {
    if (found.d === -2) throw new Error(`${app}: the bundle uses import.meta at ${found.ss}`);
    if (found.d === -1) throw new Error(`${app}: the bundle has a static import at ${found.ss}`);
    if (code.slice(found.ss, found.ss + 6) !== "import") {
      throw new Error(`${app}: no import() where es-module-lexer found one, at ${found.ss}`);
    }
    routed += `${code.slice(at, found.ss)}${BUNDLE_PARAMETERS.importModule}`;
    at = found.ss + 6;
  }
  return routed + code.slice(at);
}

/** Fails on a character outside ASCII: the loader reads the code as Latin-1 (a faster read). */
function checkAscii(code: string, app: string): void {
  const at = Buffer.from(code, "latin1").findIndex((byte) => byte > 0x7f);
  if (at >= 0) throw new Error(`${app}: the bundle has a non-ASCII character at ${at}`);
}

/**
 * The code file of one app from esbuild's CommonJS output: its `import()`s routed to the
 * loader, wrapped in one function of what the loader hands it (strict, as the ES modules it
 * was made of), under the line naming its key (the first 16 hex digits of its SHA-256).
 */
export async function toBundleCode(output: string, app: string): Promise<string> {
  const { url, loader, importModule } = BUNDLE_PARAMETERS;
  const body = await routeDynamicImports(output, app);
  const code = `(function (exports, require, module, ${url}, ${loader}, ${importModule}) {"use strict";\n${body}\n})`;
  checkAscii(code, app);
  const key = createHash("sha256").update(code).digest("hex").slice(0, 16);
  return bundleKeyLine(key) + code;
}
