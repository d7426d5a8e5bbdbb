/**
 * Every fenced code block of README.md and docs/*.md is checked, or says why not. The line
 * before a block's fence may carry `<!-- snippet: … -->`:
 *
 * - `run by <test file>[: <role>] …`: that test runs it as written; the file must exist and name
 *   the document (README.md, docs/X.md).
 * - `not runnable: <reason>`: nothing runs it (a Redis Cluster, PyPI, React…), for the reason given.
 * - `typecheck, given: <declarations>`: a TypeScript or JavaScript fragment typechecked after
 *   these declarations (the names it uses from the text around it).
 *
 * Without a marker, a block is checked by its language: `ts`, `tsx`, `js`, `mjs` are
 * typechecked (strict, against the workspace packages' types, one `tsc` for all); `json` must
 * parse, and an `mcpServers` file must pass `readMcpConfig`; `yaml` must parse, and an `agents`
 * file must pass `loadAgentsFile`; `text` is output or a diagram, nothing to run. Any other
 * block without a marker (`sh`, `python`…) fails this test.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadAgentsFile, readMcpConfig } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type MarkdownSnippet, readMarkdownSnippets } from "../support/markdownSnippets.js";
import { repoRoot } from "../support/processes.js";

const run = promisify(execFile);

const DOCS = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const snippets = DOCS.flatMap((doc) => readMarkdownSnippets(doc));
const TYPED = new Set(["ts", "tsx", "js", "mjs"]);

/** Where a snippet is: `docs/TOOLS.md:12 (ts)`. */
const whereIs = (s: MarkdownSnippet) => `${s.doc}:${s.line} (${s.lang || "no language"})`;

/** The declarations a `typecheck, given: …` marker adds before the snippet. */
function givenOf(snippet: MarkdownSnippet): string {
  return /^typecheck, given: (.*)$/.exec(snippet.marker ?? "")?.[1] ?? "";
}

/** The snippets typechecked here: typed languages with no marker, or a `typecheck` one. */
const typechecked = snippets.filter(
  (s) => TYPED.has(s.lang) && (s.marker === undefined || s.marker.startsWith("typecheck")),
);

/**
 * Typechecks `list` in one `tsc` run, each as a module of its own under node_modules/.cache
 * (so `@yiem/*`, `zod`, `bullmq`, `openai` resolve to the workspace's); resolves with the
 * diagnostics of each snippet, by its place.
 */
async function typecheck(list: MarkdownSnippet[]): Promise<Map<string, string[]>> {
  const dir = join(repoRoot, "node_modules", ".cache", "yiem-doc-snippets");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = list.map((snippet, i) => {
    const ext = snippet.lang === "tsx" ? "tsx" : snippet.lang === "ts" ? "ts" : "mjs";
    const name = `snippet-${i}.${ext}`;
    writeFileSync(join(dir, name), `${givenOf(snippet)}\n${snippet.code}\nexport {};\n`);
    return name;
  });
  const compilerOptions = {
    target: "ES2022",
    lib: ["ES2023", "DOM"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    types: ["node"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowJs: true,
    checkJs: true,
    jsx: "preserve",
  };
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files }));
  const tsc = join(repoRoot, "node_modules", ".bin", "tsc");
  const output = await run(tsc, ["-p", dir, "--pretty", "false"], { cwd: dir }).then(
    () => "",
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  const byPlace = new Map<string, string[]>();
  const unplaced = output.split("\n").filter((l) => l.trim() && !l.startsWith("snippet-"));
  if (unplaced.length > 0) byPlace.set("tsc", unplaced);
  list.forEach((snippet, i) => {
    const lines = output.split("\n").filter((l) => l.startsWith(files[i] ?? "?"));
    byPlace.set(whereIs(snippet), lines);
  });
  return byPlace;
}

/** What is wrong with a marker (`undefined`: nothing). */
function markerProblem(snippet: MarkdownSnippet): string | undefined {
  const marker = snippet.marker ?? "";
  const runBy = /^run by (test\/\S+\.test\.ts)\b/.exec(marker);
  if (runBy?.[1]) {
    const path = join(repoRoot, runBy[1]);
    if (!existsSync(path)) return `${runBy[1]} does not exist`;
    if (!readFileSync(path, "utf8").includes(snippet.doc))
      return `${runBy[1]} never names ${snippet.doc}`;
    return undefined;
  }
  const reason = /^not runnable: (.+)$/.exec(marker)?.[1];
  if (reason !== undefined) return reason.trim().length >= 10 ? undefined : "give a reason";
  if (marker.startsWith("typecheck")) return TYPED.has(snippet.lang) ? undefined : "not TypeScript";
  return `unknown marker "${marker}"`;
}

describe("the snippets of README.md and docs/*.md", () => {
  it("finds the snippets", () => {
    expect(snippets.filter((s) => s.doc === "README.md").length).toBeGreaterThan(5);
    expect(typechecked.length).toBeGreaterThan(5);
  });

  it.each(snippets.filter((s) => s.marker !== undefined).map((s) => [whereIs(s), s] as const))(
    "%s: its marker holds",
    (_where, snippet) => {
      expect(markerProblem(snippet)).toBeUndefined();
    },
  );

  it("has a marker on every block that nothing here checks by its language", () => {
    const checked = new Set([...TYPED, "json", "yaml", "text"]);
    const unmarked = snippets.filter((s) => s.marker === undefined && !checked.has(s.lang));
    expect(unmarked.map(whereIs)).toEqual([]);
  });

  it("typechecks every TypeScript and JavaScript snippet", async () => {
    const diagnostics = await typecheck(typechecked);
    const failing = [...diagnostics].filter(([, lines]) => lines.length > 0);
    expect(Object.fromEntries(failing)).toEqual({});
  }, 120_000);

  it("parses every JSON and YAML snippet; MCP configs and agents files load", async () => {
    const dir = await mkdtemp(join(tmpdir(), "yiem-doc-snippets-"));
    const data = snippets.filter(
      (s) => s.marker === undefined && ["json", "yaml"].includes(s.lang),
    );
    expect(data.length).toBeGreaterThan(2);
    for (const [i, snippet] of data.entries()) {
      const value = snippet.lang === "json" ? JSON.parse(snippet.code) : parseYaml(snippet.code);
      const file = join(dir, `snippet-${i}.${snippet.lang}`);
      await writeFile(file, snippet.code);
      // Each ${VAR} the config reads gets a value, as the environment would give it.
      const vars = [...snippet.code.matchAll(/\$\{(\w+)\}/g)].map((m) => [m[1] ?? "", "set"]);
      const env = Object.fromEntries(vars);
      if (value?.mcpServers) expect(() => readMcpConfig(file, env), whereIs(snippet)).not.toThrow();
      if (value?.agents) await expect(loadAgentsFile(file), whereIs(snippet)).resolves.toBeTruthy();
    }
  });
});
