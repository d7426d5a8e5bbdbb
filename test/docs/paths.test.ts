/**
 * Every repository path the docs cite exists. The docs: README.md, CONTRIBUTING.md,
 * docs/*.md, examples/**\/README.md, bench/README.md and each package's README.md
 * (packages/*, apps/*); not CHANGELOG.md: it names what was, on purpose.
 *
 * What counts as a cited path, in inline code (`…`) outside fenced blocks:
 * - a path from the repository root: its first folder is one of `ROOT_FOLDERS`
 *   (`packages/core/src/redis/keys.ts`, `test/support/`, `apps/cli`);
 * - a path inside `packages/core/src`, as docs/ARCHITECTURE.md writes them: it has a `/` and
 *   its first folder is one of that folder's (`worker/toolWorker.ts`, `client/`);
 * - a bare file name (`keys.ts`, `startRun-9.lua`): some file of the repository has it;
 * - a `*` stands for any name within one folder (`tools/*`, `redis/scripts/*.lua`): one matches.
 * Left out: code with spaces or placeholders (`<id>`, `…`), URLs and keys (a `:`), package
 * names (`@yiem/core`), HTTP paths (`/healthz`), and build output (a `dist/` folder).
 * Relative Markdown links (`[text](path)`) must exist too, from the document's folder. A
 * package's README is also read where the package is installed, so its paths may start from
 * the package's folder instead (`examples/time.json` in packages/testing/README.md).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

/** Root folders whose paths the docs cite from the repository root. */
const ROOT_FOLDERS = [
  "packages",
  "apps",
  "test",
  "bench",
  "scripts",
  "docs",
  "examples",
  "api",
  "chaos",
];
/** Folders never searched (dependencies, build output, git). */
const IGNORED = new Set(["node_modules", "dist", ".git"]);
const CORE_SRC = "packages/core/src";
const BARE_FILE = /^[\w-][\w.-]*\.(ts|mts|mjs|js|lua|md|json|ya?ml|sh)$/;
const NOT_A_PATH = /[\s<>…:{}$=`'"()]|^[/@.~]/;

/** Every file under `dir` (relative to the repo root), ignored folders left out. */
function listFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    if (IGNORED.has(entry.name)) return [];
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}

const allFiles = listFiles("");
const fileNames = new Set(allFiles.map((path) => path.slice(path.lastIndexOf("/") + 1)));
const coreFolders = new Set(
  readdirSync(join(repoRoot, CORE_SRC), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name),
);

const docs = allFiles
  .filter(
    (path) =>
      ["README.md", "CONTRIBUTING.md"].includes(path) ||
      /^docs\/[^/]+\.md$/.test(path) ||
      /^examples\/(.+\/)?README\.md$/.test(path) ||
      /^(bench|(packages|apps)\/[^/]+)\/README\.md$/.test(path),
  )
  .sort();

/** The inline code spans of a Markdown text, fenced blocks left out. */
function inlineCode(markdown: string): string[] {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, "");
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? "");
}

/** The relative targets of a Markdown text's links (no URL, no bare anchor). */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[ \t]*$/gm, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => (match[1] ?? "").split("#")[0] ?? "")
    .filter((target) => target !== "" && !/^[a-z]+:/i.test(target));
}

/** Where a code span points (a repo-relative path), or undefined when it is not a path. */
function resolveSpan(span: string): string | undefined {
  if (NOT_A_PATH.test(span) || /(^|\/)dist(\/|$)/.test(span)) return undefined;
  const first = span.split("/")[0] ?? "";
  if (span.includes("/") && ROOT_FOLDERS.includes(first)) return span;
  if (span.includes("/") && coreFolders.has(first)) return `${CORE_SRC}/${span}`;
  return undefined;
}

/** A path segment with `*` as a pattern matching whole names. */
function segmentPattern(segment: string): RegExp {
  const parts = segment.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`);
}

/** Whether `path` (repo-relative; `*` matches any name within one segment) exists. */
function pathExists(path: string): boolean {
  let found = [""];
  for (const segment of path.replace(/\/$/, "").split("/")) {
    found = found.flatMap((dir) => {
      const full = join(repoRoot, dir);
      if (!segment.includes("*"))
        return existsSync(join(full, segment)) ? [join(dir, segment)] : [];
      if (!existsSync(full) || !statSync(full).isDirectory()) return [];
      const pattern = segmentPattern(segment);
      return readdirSync(full)
        .filter((name) => pattern.test(name))
        .map((name) => join(dir, name));
    });
  }
  return found.length > 0;
}

/** The folder of the package whose README `doc` is (`packages/testing/`), if it is one. */
function packageFolderOf(doc: string): string | undefined {
  return /^(packages|apps)\/[^/]+\//.exec(doc)?.[0];
}

/** The paths `doc` cites that do not exist, each as "`span` (looked for at …)". */
function missingPaths(doc: string): string[] {
  const markdown = readFileSync(join(repoRoot, doc), "utf8");
  const packageFolder = packageFolderOf(doc);
  const missing: string[] = [];
  for (const span of inlineCode(markdown)) {
    const path = resolveSpan(span);
    const inPackage = packageFolder !== undefined && pathExists(`${packageFolder}${span}`);
    if (path !== undefined && !pathExists(path) && !inPackage)
      missing.push(`${doc}: \`${span}\` (looked for at ${path})`);
    if (path === undefined && BARE_FILE.test(span) && !fileNames.has(span)) {
      missing.push(`${doc}: \`${span}\` (no file of the repository has this name)`);
    }
  }
  for (const target of linkTargets(markdown)) {
    const path = relative(repoRoot, join(repoRoot, dirname(doc), target));
    if (!pathExists(path)) missing.push(`${doc}: link (${target}) (looked for at ${path})`);
  }
  return missing;
}

describe("paths cited in the docs", () => {
  it("finds the docs", () => {
    expect(docs).toContain("README.md");
    expect(docs).toContain("docs/ARCHITECTURE.md");
  });

  it.each(docs)("every path %s cites exists", (doc) => {
    expect(missingPaths(doc), `${doc} cites paths that do not exist`).toEqual([]);
  });
});
