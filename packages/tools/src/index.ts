import type { AgentTool } from "@yiem/core";
import { getTool as getTimeTool } from "./tools/getTime.js";
import { getTool as getWeatherTool } from "./tools/getWeather.js";
import { getTool as httpFetchTool } from "./tools/httpFetch.js";

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

export { builtinToolsDir, loadBuiltinAndExtraTools } from "./builtinAndExtraTools.js";
export {
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  type BuiltinToolOptions,
  DEFAULT_BUILTIN_TOOLS,
  registerBuiltinTools,
  selectBuiltinTools,
} from "./builtinTools.js";
export {
  loadProcessTools,
  type ProcessToolsOptions,
  ToolLoadingError,
} from "./loadProcessTools.js";
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
