import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { AgentTool } from "../types/index.js";
import { describeLoadError } from "./describeLoadError.js";
import { importToolFile } from "./importToolFile.js";
import { describeInvalidTool } from "./isAgentTool.js";
import { listTool } from "./listTool.js";
import { namesOwnPackages } from "./namesOwnPackages.js";
import { findToolExport } from "./toolFileExports.js";
import { describeError } from "./toolResults.js";
import { registerTool, type ToolStore } from "./toolStore.js";
import { describeInvalidSchema } from "./validateArguments.js";

/** A tool file that could not be loaded, and why (naming file, line and column when known). */
export interface ToolLoadFailure {
  path: string;
  error: string;
}

/**
 * Why a file of a tools folder is no tool file: a test (`*.test.ts`, `*.spec.mjs`, …), type
 * declarations (`*.d.ts`), a source map (`*.map`), a registry (a name containing "registry"),
 * or an extension other than `.ts`, `.mts`, `.js`, `.mjs`, `.cjs`.
 */
export type ToolFileSkipReason =
  | "testFile"
  | "typeDeclarations"
  | "sourceMap"
  | "registryFile"
  | "otherExtension";

/** A file `loadTools` left out on purpose, and why. */
export interface SkippedToolFile {
  path: string;
  reason: ToolFileSkipReason;
}

/** What `loadTools` did: the store's tools afterwards, the files loaded, left out and refused. */
export interface LoadToolsResult {
  tools: Map<string, AgentTool>;
  loaded: Array<{ path: string; toolName: string }>;
  skipped: SkippedToolFile[];
  failures: ToolLoadFailure[];
}

const TOOL_FILE = /\.(ts|mts|js|mjs|cjs)$/;

function skipReasonOf(name: string): ToolFileSkipReason | undefined {
  if (/\.d\.[cm]?ts$/i.test(name)) return "typeDeclarations";
  if (/\.(test|spec)\.[cm]?[jt]sx?$/i.test(name)) return "testFile";
  if (/\.map$/i.test(name)) return "sourceMap";
  if (!TOOL_FILE.test(name)) return "otherExtension";
  if (/registry/i.test(name)) return "registryFile";
  return undefined;
}

/** The files of a folder as `loadTools` sees them: tool files and files left out, both sorted. */
export async function scanToolFiles(
  dir: string,
): Promise<{ files: string[]; skipped: SkippedToolFile[] }> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  const files: string[] = [];
  const skipped: SkippedToolFile[] = [];
  for (const name of names.sort()) {
    const path = resolve(join(dir, name));
    const reason = skipReasonOf(name);
    if (reason) skipped.push({ path, reason });
    else files.push(path);
  }
  return { files, skipped };
}

/** The tool files of a folder as `loadTools` sees them: sorted, registries/types/tests left out. */
export async function listToolFiles(dir: string): Promise<string[]> {
  return (await scanToolFiles(dir)).files;
}

/** Where each tool of a store came from, for the message about a second tool of a name. */
const toolSources = new WeakMap<ToolStore, Map<string, string>>();
const LIST_TOOLS_SOURCE = "loadTools (built in)";

function sourcesOf(store: ToolStore): Map<string, string> {
  let sources = toolSources.get(store);
  if (!sources) {
    sources = new Map();
    toolSources.set(store, sources);
  }
  return sources;
}

/**
 * Registers `tool` in `store` as coming from `path`, so a later tool file with its name is
 * refused naming both files (how `@yiem/tools` registers its built-ins). Throws as
 * `registerTool` does.
 *
 * @example registerToolFrom(store, getTimeTool(), "/app/tools/getTime.js")
 */
export function registerToolFrom(store: ToolStore, tool: AgentTool, path: string): void {
  registerTool(store, tool);
  sourcesOf(store).set(tool.name, path);
}

/** Why `tool` of file `path` may not join `store`: a tool of its name is there and it does not override. */
function describeDuplicate(store: ToolStore, tool: AgentTool, path: string): string | undefined {
  if (!store.tools.has(tool.name) || tool.overrides === true) return undefined;
  const first = sourcesOf(store).get(tool.name) ?? "code (registerTool)";
  if (first === path) return undefined; // the same file loaded again
  return `tool "${tool.name}" is already loaded from ${first}; ${path} defines it again (set overrides: true on it to replace the first)`;
}

/**
 * Loads every tool file of `dir` into `store` (lifecycle §4, §17): files sorted by name, each
 * imported in its own module scope (`.ts` and `.mts` through tsx, `.js`, `.mjs` and `.cjs`
 * natively, the same under every start command; `@yiem/core` and `@yiem/tools` resolve to
 * this process's copies from a folder anywhere). A file gives its tool as a `getTool()`
 * export, or as a default export that is a tool or a function returning one.
 *
 * A file is refused, with its path in `failures` while the others still load, when it fails
 * to import (the message names file, line and column when they can be found), exports no
 * tool, throws, gives an invalid tool (a name or queue `registerTool` refuses, an
 * `inputSchema` ajv cannot compile: ajv's message), or a tool whose name is already in the
 * store (a built-in, an earlier file: both paths named) without `overrides: true`. Tests,
 * `.d.ts`, registry files and other extensions are listed in `skipped`. `listTools` is
 * registered last (unless a file overrode it). Never throws for a bad file; throws only when
 * `dir` itself cannot be read.
 *
 * @example
 * const { failures, skipped } = await loadTools(store, builtinToolsDir);
 * for (const f of failures) log.warn(f, "tool file refused");
 */
export async function loadTools(store: ToolStore, dir: string): Promise<LoadToolsResult> {
  const { files, skipped } = await scanToolFiles(dir);
  const result: LoadToolsResult = { tools: store.tools, loaded: [], skipped, failures: [] };
  const ownPackages = files.length > 0 && (await namesOwnPackages(dir)); // read once per load
  for (const path of files) {
    const problem = await addToolFile(store, path, ownPackages);
    if (typeof problem === "string") result.failures.push({ path, error: problem });
    else result.loaded.push({ path, toolName: problem.toolName });
  }
  const sources = sourcesOf(store);
  if (!store.tools.has("listTools") || sources.get("listTools") === LIST_TOOLS_SOURCE) {
    registerTool(store, listTool(store));
    sources.set("listTools", LIST_TOOLS_SOURCE);
  }
  return result;
}

/** Loads one file into the store; returns the tool's name, or why it was refused. */
async function addToolFile(
  store: ToolStore,
  path: string,
  ownPackages: boolean,
): Promise<{ toolName: string } | string> {
  const loaded = await loadToolFile(path, ownPackages);
  if (loaded.kind === "failed") return loaded.error;
  const duplicate = describeDuplicate(store, loaded.tool, path);
  if (duplicate) return duplicate;
  try {
    registerTool(store, loaded.tool);
  } catch (err) {
    return describeError(err);
  }
  sourcesOf(store).set(loaded.tool.name, path);
  return { toolName: loaded.tool.name };
}

type LoadedFile = { kind: "loaded"; tool: AgentTool } | { kind: "failed"; error: string };

/**
 * Imports one tool file and checks the tool it gives (shape and input schema); never throws.
 * `ownPackages`: whether its folder names `@yiem/core` or `@yiem/tools` (read from the folder
 * when not given).
 */
export async function loadToolFile(path: string, ownPackages?: boolean): Promise<LoadedFile> {
  let mod: Record<string, unknown>;
  try {
    mod = await importToolFile(path, ownPackages);
  } catch (err) {
    return { kind: "failed", error: await describeLoadError(path, err) };
  }
  const found = findToolExport(mod);
  if (found.kind === "none") {
    return {
      kind: "failed",
      error: "the file does not export a getTool() function or a default tool",
    };
  }
  let tool: unknown = found.kind === "value" ? found.value : undefined;
  if (found.kind === "factory") {
    try {
      tool = await found.make();
    } catch (err) {
      return { kind: "failed", error: `${found.name} threw: ${describeError(err)}` };
    }
  }
  const problem =
    describeInvalidTool(tool) ?? describeInvalidSchema((tool as AgentTool).inputSchema);
  if (problem) return { kind: "failed", error: problem };
  return { kind: "loaded", tool: tool as AgentTool };
}
