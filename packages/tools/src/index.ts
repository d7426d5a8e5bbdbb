import { fileURLToPath } from "node:url";
import { type AgentTool, loadTools, type ToolLoadFailure, type ToolStore } from "@yiem/core";
import { type BuiltinToolOptions, registerBuiltinTools } from "./builtinTools.js";
import { getTool as getTimeTool } from "./tools/getTime.js";
import { getTool as getWeatherTool } from "./tools/getWeather.js";
import { getTool as httpFetchTool } from "./tools/httpFetch.js";

/**
 * Absolute path of the built-in tool files (`src/tools/`, or `dist/tools/` once built):
 * one file per tool, each exporting `getTool()` (lifecycle §17), ready for `loadTools`.
 *
 * @example await loadTools(store, builtinToolsDir)
 */
export const builtinToolsDir: string = fileURLToPath(new URL("./tools/", import.meta.url));

/**
 * Fresh instances of all the built-in tools, in name order: `getTime`, `getWeather`,
 * `httpFetch` (allowing what `YIEM_HTTP_FETCH_ALLOW` names). The static alternative to
 * `loadTools(store, builtinToolsDir)`; a process chooses among them with
 * `registerBuiltinTools` / `loadBuiltinAndExtraTools` instead.
 *
 * @example for (const tool of getBuiltinTools()) registerTool(store, tool);
 */
export function getBuiltinTools(): AgentTool[] {
  return [getTimeTool(), getWeatherTool(), httpFetchTool()];
}

export {
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  type BuiltinToolOptions,
  DEFAULT_BUILTIN_TOOLS,
  registerBuiltinTools,
  selectBuiltinTools,
} from "./builtinTools.js";
export {
  type AddressRefusal,
  checkFetchAddress,
  describeRefusedAddress,
  type FetchAllowList,
  isAllowedHost,
  NO_FETCH_ALLOWANCES,
  parseFetchAllowList,
} from "./toolSupport/addressPolicy.js";
export {
  type AddressResolver,
  createGuardedLookup,
  FetchRefusedError,
  resolveCheckedAddresses,
} from "./toolSupport/guardedLookup.js";
export { formatZonedTime, type ZonedTime } from "./tools/getTime.js";
export { describeWeatherCode } from "./tools/getWeather.js";
export {
  createHttpFetchTool,
  type HttpFetchOptions,
  type HttpFetchProgress,
  isTextual,
} from "./tools/httpFetch.js";

/**
 * Loads the selected built-in tools (`options`, see `registerBuiltinTools`: by default
 * `getTime` and `getWeather`), then the tool files of `extraDir` (a later file with the same
 * name replaces a built-in), into `store`. Returns every file that failed, with its path;
 * throws on an unknown built-in name or a bad `httpFetchAllow` entry.
 *
 * @example const failures = await loadBuiltinAndExtraTools(store, process.env.YIEM_TOOLS_DIR);
 */
export async function loadBuiltinAndExtraTools(
  store: ToolStore,
  extraDir?: string,
  options: BuiltinToolOptions = {},
): Promise<ToolLoadFailure[]> {
  const builtin = registerBuiltinTools(store, options);
  if (!extraDir) return builtin.failures;
  const extra = await loadTools(store, extraDir);
  return [...builtin.failures, ...extra.failures];
}
