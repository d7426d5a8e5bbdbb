import type { AgentTool } from "@yiem/core";
import { getTool as getTimeTool } from "./tools/getTime.js";
import { getTool as getWeatherTool } from "./tools/getWeather.js";
import { getTool as httpFetchTool } from "./tools/httpFetch.js";

/**
 * Fresh instances of the built-in tools, in name order: `getTime`, `getWeather`, `httpFetch`.
 * The static alternative to `loadTools(store, builtinToolsDir)`.
 *
 * @example for (const tool of getBuiltinTools()) registerTool(store, tool);
 */
export function getBuiltinTools(): AgentTool[] {
  return [getTimeTool(), getWeatherTool(), httpFetchTool()];
}

export { builtinToolsDir, loadBuiltinAndExtraTools } from "./builtinAndExtraTools.js";
export {
  loadProcessTools,
  type ProcessToolsOptions,
  ToolLoadingError,
} from "./loadProcessTools.js";
export { formatZonedTime, type ZonedTime } from "./tools/getTime.js";
export { describeWeatherCode } from "./tools/getWeather.js";
export { type HttpFetchProgress, isTextual } from "./tools/httpFetch.js";
