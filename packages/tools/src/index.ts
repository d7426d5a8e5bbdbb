import { fileURLToPath } from "node:url";
import type { AgentTool } from "@yiem/core";
import { getTool as getTimeTool } from "./tools/getTime.js";
import { getTool as getWeatherTool } from "./tools/getWeather.js";
import { getTool as httpFetchTool } from "./tools/httpFetch.js";

/**
 * Absolute path of the built-in tool files (`src/tools/`, or `dist/tools/` once built):
 * one file per tool, each exporting `getTool()` (seed §17), ready for `loadTools`.
 *
 * @example await loadTools(store, builtinToolsDir)
 */
export const builtinToolsDir: string = fileURLToPath(new URL("./tools/", import.meta.url));

/**
 * Fresh instances of the built-in tools, in name order: `getTime`, `getWeather`, `httpFetch`.
 * The static alternative to `loadTools(store, builtinToolsDir)`.
 *
 * @example for (const tool of getBuiltinTools()) registerTool(store, tool);
 */
export function getBuiltinTools(): AgentTool[] {
  return [getTimeTool(), getWeatherTool(), httpFetchTool()];
}

export { formatZonedTime, type ZonedTime } from "./tools/getTime.js";
export { describeWeatherCode } from "./tools/getWeather.js";
export { type HttpFetchProgress, isTextual } from "./tools/httpFetch.js";
