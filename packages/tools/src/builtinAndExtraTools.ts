import { fileURLToPath } from "node:url";
import { type LoadToolsResult, loadTools, type ToolStore } from "@yiem/core";
import { type BuiltinToolOptions, registerBuiltinTools } from "./builtinTools.js";

/**
 * Absolute path of the built-in tool files (`src/tools/`, or `dist/tools/` once built):
 * one file per tool, each exporting `getTool()` (lifecycle §17), ready for `loadTools`.
 *
 * @example await loadTools(store, builtinToolsDir)
 */
export const builtinToolsDir: string = fileURLToPath(new URL("./tools/", import.meta.url));

/**
 * Registers the selected built-in tools (`options`, see `registerBuiltinTools`: by default
 * `getTime` and `getWeather`), then loads the tool files of `extraDir`, into `store` (see `loadTools`:
 * a file whose tool has a built-in's name is refused, naming both files, unless the tool says
 * `overrides: true`). Returns both folders' files loaded, left out and refused, with their
 * paths, built-ins first. Never throws for a bad file; throws on an unknown built-in name or a
 * bad `httpFetchAllow` entry (a start error).
 *
 * @example
 * const { failures } = await loadBuiltinAndExtraTools(store, readSettings("worker").toolsDir);
 */
export async function loadBuiltinAndExtraTools(
  store: ToolStore,
  extraDir?: string,
  options: BuiltinToolOptions = {},
): Promise<LoadToolsResult> {
  const builtin = registerBuiltinTools(store, options);
  if (!extraDir) return builtin;
  const extra = await loadTools(store, extraDir);
  return {
    tools: store.tools,
    loaded: [...builtin.loaded, ...extra.loaded],
    skipped: [...builtin.skipped, ...extra.skipped],
    failures: [...builtin.failures, ...extra.failures],
  };
}
