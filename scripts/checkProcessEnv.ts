/**
 * `npm run check:env` (run by `npm run lint`): fails when `process.env` appears in the
 * product's code (packages/*\/src, apps/*\/src) anywhere but the settings catalogue's reader,
 * packages/core/src/settings/readSettings.ts. Settings are read through the catalogue
 * (`readSettings`, `readSetting`), so each is declared, documented and checked once.
 * @yiem/testing is left out: its fixtures are no Yiem process (they hand the environment on
 * to the processes they spawn and honour the test runner's `REDIS_URL`).
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

/** The one file that may read `process.env`. */
const READER = "packages/core/src/settings/readSettings.ts";

/** Folders left out, with the reason in this file's comment. */
const LEFT_OUT = ["packages/testing/src"];

/** Apps whose code is not under `src` (the offline demo runs from its folder). */
const APPS_WITHOUT_SRC = ["apps/demo"];

/** The source folders checked: every package's and app's `src`, and the apps without one. */
function sourceFolders(): string[] {
  const srcs = ["packages", "apps"].flatMap((parent) =>
    readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}/src`)
      .filter((folder) => !LEFT_OUT.includes(folder)),
  );
  return [...srcs, ...APPS_WITHOUT_SRC];
}

/** Every `.ts`, `.mts`, `.js` or `.mjs` file under `folder` (relative to the root). */
function sourceFiles(folder: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(root, folder), { withFileTypes: true, recursive: true });
  } catch {
    return []; // an app without src
  }
  return entries
    .filter((entry) => entry.isFile() && /\.(m?ts|m?js)$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** `file:line` of each use of `process.env` outside the reader. */
export function findProcessEnvUses(): string[] {
  const uses: string[] = [];
  for (const file of sourceFolders().flatMap(sourceFiles)) {
    if (file === READER) continue;
    readFileSync(join(root, file), "utf8")
      .split("\n")
      .forEach((line, index) => {
        if (/process\s*\.\s*env\b|process\s*\[\s*["'`]env/.test(line))
          uses.push(`${file}:${index + 1}`);
      });
  }
  return uses;
}

const uses = findProcessEnvUses();
if (uses.length > 0) {
  console.error(
    `process.env outside the settings catalogue's reader (${READER}); read settings with readSettings / readSetting:\n${uses.map((use) => `  ${use}`).join("\n")}`,
  );
  process.exitCode = 1;
}
