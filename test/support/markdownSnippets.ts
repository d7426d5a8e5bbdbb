import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./processes.js";

/**
 * One fenced code block of a Markdown document, with the `<!-- snippet: … -->` comment on the
 * line just before its fence, if any (how the block is checked: see test/docs/snippets.test.ts).
 */
export interface MarkdownSnippet {
  /** The document, relative to the repository root (`README.md`, `docs/TOOLS.md`). */
  doc: string;
  /** The 1-based line of the opening fence. */
  line: number;
  /** The fence's language (`ts`, `sh`, `text`…), `""` for none. */
  lang: string;
  /** The block's text, its indentation (a block inside a list item) removed, ending in a newline. */
  code: string;
  /** The text of the snippet comment before the fence (`run by test/…: setup`), if any. */
  marker?: string;
}

const FENCE = /^(\s*)```([\w-]*)\s*$/;
const MARKER = /^\s*<!-- snippet: (.*?) -->\s*$/;

/** Every fenced code block of `doc` (relative to the repository root), in order. */
export function readMarkdownSnippets(doc: string): MarkdownSnippet[] {
  const lines = readFileSync(join(repoRoot, doc), "utf8").split("\n");
  const snippets: MarkdownSnippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? "");
    if (!open) continue;
    const indent = open[1]?.length ?? 0;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    if (end < 0) throw new Error(`${doc}:${i + 1}: a code fence that never closes`);
    const body = lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.search(/\S|$/))));
    const marker = MARKER.exec(lines[i - 1] ?? "")?.[1];
    snippets.push({ doc, line: i + 1, lang: open[2] ?? "", code: `${body.join("\n")}\n`, marker });
    i = end;
  }
  return snippets;
}

/** The snippets of `doc` whose marker reads `run by <testPath>: <role>`, by role. */
export function snippetsRunBy(doc: string, testPath: string): Map<string, MarkdownSnippet> {
  const byRole = new Map<string, MarkdownSnippet>();
  const prefix = `run by ${testPath}: `;
  for (const snippet of readMarkdownSnippets(doc)) {
    if (snippet.marker?.startsWith(prefix))
      byRole.set(snippet.marker.slice(prefix.length), snippet);
  }
  return byRole;
}
