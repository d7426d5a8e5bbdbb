import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentTool } from "../types/index.js";
import { describeInvalidTool } from "./isAgentTool.js";
import { listTool } from "./listTool.js";
import { describeError } from "./toolResults.js";
import { registerTool, type ToolStore } from "./toolStore.js";

/** A tool file that could not be loaded, and why. */
export interface ToolLoadFailure {
  path: string;
  error: string;
}

/** What `loadTools` did: the store's tools afterwards, the files loaded, the files refused. */
export interface LoadToolsResult {
  tools: Map<string, AgentTool>;
  loaded: Array<{ path: string; toolName: string }>;
  failures: ToolLoadFailure[];
}

const TOOL_FILE = /\.(ts|js|mjs)$/;
const SKIPPED_FILE = /registry|\.d\.ts$|\.(test|spec)\.[cm]?[jt]s$/i;

/** The tool files of a folder as `loadTools` sees them: sorted, registries/types/tests left out. */
export async function listToolFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && TOOL_FILE.test(entry.name))
    .filter((entry) => !SKIPPED_FILE.test(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((name) => resolve(join(dir, name)));
}

/**
 * Loads every tool file of `dir` into `store` (lifecycle §4, §17): files sorted by name, each
 * imported in its own module scope, its `getTool()` called and the result checked. A file
 * that fails to import, has no `getTool`, throws, or returns an invalid tool (a name or
 * queue `registerTool` refuses included, the message naming the tool) is reported in
 * `failures` with its path; the others still load. `listTools` is registered last.
 * Never throws for a bad file; throws only when `dir` itself cannot be read.
 *
 * @example
 * const { failures } = await loadTools(store, builtinToolsDir);
 * for (const f of failures) log.warn(f, "tool file skipped");
 */
export async function loadTools(store: ToolStore, dir: string): Promise<LoadToolsResult> {
  const result: LoadToolsResult = { tools: store.tools, loaded: [], failures: [] };
  for (const path of await listToolFiles(dir)) {
    const loaded = await loadToolFile(path);
    if (loaded.kind === "failed") {
      result.failures.push({ path, error: loaded.error });
      continue;
    }
    try {
      registerTool(store, loaded.tool);
    } catch (err) {
      result.failures.push({ path, error: describeError(err) });
      continue;
    }
    result.loaded.push({ path, toolName: loaded.tool.name });
  }
  registerTool(store, listTool(store));
  return result;
}

type LoadedFile = { kind: "loaded"; tool: AgentTool } | { kind: "failed"; error: string };

/** Imports one tool file and validates its `getTool()`; never throws. */
export async function loadToolFile(path: string): Promise<LoadedFile> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (err) {
    return { kind: "failed", error: `failed to load: ${describeError(err)}` };
  }
  if (typeof mod.getTool !== "function") {
    return { kind: "failed", error: "the file does not export a getTool() function" };
  }
  let tool: unknown;
  try {
    tool = await (mod.getTool as () => unknown)();
  } catch (err) {
    return { kind: "failed", error: `getTool() threw: ${describeError(err)}` };
  }
  const problem = describeInvalidTool(tool);
  if (problem) return { kind: "failed", error: problem };
  return { kind: "loaded", tool: tool as AgentTool };
}
