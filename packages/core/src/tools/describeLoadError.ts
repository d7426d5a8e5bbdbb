import { readFile } from "node:fs/promises";
import { describeError } from "./toolResults.js";

/** A place in a file, 1-based, as editors show it. */
interface SourcePlace {
  line: number;
  column: number;
}

type EsbuildTransform = (
  source: string,
  options: { loader: "ts" | "js"; sourcefile: string; format?: "esm" },
) => Promise<unknown>;

interface EsbuildFailure {
  errors?: Array<{ text: string; location?: { line: number; column: number } | null }>;
}

/** The first syntax error esbuild finds in `source`, or nothing when it parses. */
async function findSyntaxError(
  path: string,
  source: string,
): Promise<{ text: string; place: SourcePlace } | undefined> {
  const { transform } = (await import("esbuild")) as unknown as { transform: EsbuildTransform };
  const loader = /\.[cm]?ts$/.test(path) ? "ts" : "js";
  try {
    await transform(source, { loader, sourcefile: path });
    return undefined;
  } catch (err) {
    const first = (err as EsbuildFailure).errors?.[0];
    if (!first?.location) return undefined;
    const place = { line: first.location.line, column: first.location.column + 1 };
    return { text: first.text, place };
  }
}

/** Where the stack of `err` first points into `path` (an error thrown while the file ran). */
function findStackPlace(path: string, err: unknown): SourcePlace | undefined {
  const stack = err instanceof Error ? (err.stack ?? "") : "";
  for (const match of stack.matchAll(/(?:file:\/\/)?([^\s()]+?)(?:\?[^\s():]*)?:(\d+):(\d+)/g)) {
    if (match[1] === path) return { line: Number(match[2]), column: Number(match[3]) };
  }
  return undefined;
}

/** Where `source` names the module `err` could not find (`Cannot find module 'x'`). */
function findMissingImport(source: string, err: unknown): SourcePlace | undefined {
  const message = err instanceof Error ? err.message : "";
  const missing = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  if (!missing) return undefined;
  const lines = source.split("\n");
  for (const [index, text] of lines.entries()) {
    for (const quote of ['"', "'", "`"]) {
      const column = text.indexOf(`${quote}${missing}${quote}`);
      if (column >= 0) return { line: index + 1, column: column + 1 };
    }
  }
  return undefined;
}

/**
 * Describes why importing tool file `path` failed, naming the file, line and column when they
 * can be found: a syntax error (TypeScript or JavaScript, located by esbuild), an import that
 * cannot be resolved (where the file names it), or an error thrown while the file ran (its
 * stack). Never throws.
 *
 * @example "failed to load /tools/bad.ts:3:1: Expected identifier but found end of file"
 */
export async function describeLoadError(path: string, err: unknown): Promise<string> {
  const source = await readFile(path, "utf8").catch(() => undefined);
  if (source === undefined) return `failed to load ${path}: ${describeError(err)}`;
  const syntax = await findSyntaxError(path, source).catch(() => undefined);
  if (syntax) {
    const { line, column } = syntax.place;
    return `failed to load ${path}:${line}:${column}: syntax error: ${syntax.text}`;
  }
  const place = findMissingImport(source, err) ?? findStackPlace(path, err);
  const where = place ? `${path}:${place.line}:${place.column}` : path;
  return `failed to load ${where}: ${describeError(err)}`;
}
