/**
 * Every MCP server the docs and examples start with `npx` passes `-y` (or `--yes`): without
 * it `npx` waits for a yes no one types (`npx canceled due to missing packages and no YES
 * option`), and the worker restarts the server forever. Read: README.md, docs/*.md, each
 * package's README.md, examples/ and deploy/ (Markdown, JSON and YAML).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

const ROOTS = ["README.md", "docs", "examples", "deploy", "apps", "packages"];
const READ = /\.(md|json|ya?ml)$/;
const SKIPPED = new Set(["node_modules", "dist", "src", ".figures"]);

/** The files under `path` the check reads. */
function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return READ.test(path) ? [path] : [];
  return readdirSync(path)
    .filter((name) => !SKIPPED.has(name))
    .flatMap((name) => filesUnder(join(path, name)));
}

/** The `args` of every `npx` command in `text`: JSON (`"command": "npx", "args": [...]`). */
function npxArgsIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/"command"\s*:\s*"npx"\s*,\s*"args"\s*:\s*\[([^\]]*)\]/g))
    found.push(match[1] ?? "");
  return found;
}

describe("npx in the MCP examples", () => {
  it("always passes -y, so npx never waits for a yes", () => {
    const files = ROOTS.flatMap((root) => filesUnder(join(repoRoot, root)));
    const examples = files.flatMap((file) =>
      npxArgsIn(readFileSync(file, "utf8")).map((args) => ({
        file: relative(repoRoot, file),
        args,
      })),
    );
    expect(examples.length).toBeGreaterThan(0);
    const without = examples.filter(({ args }) => !/^\s*"(-y|--yes)"/.test(args));
    expect(without).toEqual([]);
  });

  it("finds an example without -y", () => {
    expect(
      npxArgsIn('{ "command": "npx", "args": ["@modelcontextprotocol/server-everything"] }'),
    ).toEqual(['"@modelcontextprotocol/server-everything"']);
  });
});
