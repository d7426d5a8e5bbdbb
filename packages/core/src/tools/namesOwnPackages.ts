import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Source files that may import a package: JavaScript and TypeScript in every module flavour. */
const SOURCE_FILE = /\.[cm]?[jt]sx?$/;

/** How many files of one folder tree are read at most; past it the answer is yes. */
const MAX_FILES = 500;

/** Text that names `@yiem/core` or `@yiem/tools` (an import, a require, a type import). */
const NAMES_OWN_PACKAGE = /@yiem\/(core|tools)\b/;

/** Block comments and line comments (not a `//` right after a `:` or a quote, as in a URL). */
const COMMENTS = /\/\*[\s\S]*?\*\/|(^|[^:"'`\\])\/\/.*$/gm;

/**
 * Whether `source`, its comments left out, names an own package: a JSDoc type such as
 * `@returns {import("@yiem/core").AgentTool}` loads nothing. A `//` inside a string (other
 * than after `:` or a quote) hides the rest of its line: an import written after it on the
 * same line is missed.
 */
function sourceNamesOwnPackage(source: string): boolean {
  if (!NAMES_OWN_PACKAGE.test(source)) return false;
  return NAMES_OWN_PACKAGE.test(source.replace(COMMENTS, "$1"));
}

/**
 * Whether a source file in the folder tree `folder` (outside `node_modules` and hidden
 * folders) names `@yiem/core` or `@yiem/tools`: only then do its tool files need the
 * process's resolve hook (`useOwnYiemPackages`), whose thread costs a start some 70 ms. A tree
 * with more than 500 source files, or one that cannot be read, answers yes (the hook is the
 * safe side). Read anew on every call (files may change between two loads). Never throws.
 *
 * A tool that imports a helper from outside its own folder, and that helper a `@yiem`
 * package, is not seen: give the tool file itself the import, or keep helpers in its folder.
 *
 * @example if (await namesOwnPackages(dirname(path))) await useOwnYiemPackages();
 */
export function namesOwnPackages(folder: string): Promise<boolean> {
  return scanFolder(folder).catch(() => true);
}

/** Reads the folder tree's source files until one names a `@yiem` package. */
async function scanFolder(folder: string): Promise<boolean> {
  const files = await listSourceFiles(folder);
  if (files.length > MAX_FILES) return true;
  for (const file of files) {
    if (sourceNamesOwnPackage(await readFile(file, "utf8"))) return true;
  }
  return false;
}

/** The source files under `folder` (at most one past the cap), skipping dependencies. */
async function listSourceFiles(folder: string): Promise<string[]> {
  const files: string[] = [];
  const pending = [folder];
  while (pending.length > 0 && files.length <= MAX_FILES) {
    const dir = pending.pop() as string;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (SOURCE_FILE.test(entry.name)) files.push(full);
    }
  }
  return files;
}
