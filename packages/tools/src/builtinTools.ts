import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AgentTool,
  type LoadToolsResult,
  listTool,
  registerTool,
  registerToolFrom,
  type ToolStore,
} from "@yiem/core";
import { parseFetchAllowList } from "./toolSupport/addressPolicy.js";
import { getTool as getTimeTool } from "./tools/getTime.js";
import { getTool as getWeatherTool } from "./tools/getWeather.js";
import { createHttpFetchTool } from "./tools/httpFetch.js";

/** The names of the built-in tools, in name order. */
export const BUILTIN_TOOL_NAMES = ["getTime", "getWeather", "httpFetch"] as const;

/** One built-in tool's name. */
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/**
 * The built-ins a process offers when `YIEM_BUILTIN_TOOLS` is unset: `getTime` and
 * `getWeather`. `httpFetch` reaches the network on the model's say, so it is opt-in.
 */
export const DEFAULT_BUILTIN_TOOLS: readonly BuiltinToolName[] = ["getTime", "getWeather"];

/** Which built-ins to offer, and what `httpFetch` may reach. */
export interface BuiltinToolOptions {
  /**
   * Built-in tool names (`YIEM_BUILTIN_TOOLS`); `[]` for none, unset for
   * {@link DEFAULT_BUILTIN_TOOLS}. An unknown name throws.
   */
  builtinTools?: readonly string[];
  /**
   * Hosts or CIDR ranges `httpFetch` may reach although its guard refuses them
   * (`YIEM_HTTP_FETCH_ALLOW`); none when unset.
   */
  httpFetchAllow?: readonly string[];
}

function isBuiltinToolName(name: string): name is BuiltinToolName {
  return (BUILTIN_TOOL_NAMES as readonly string[]).includes(name);
}

/**
 * Checks a selection of built-ins and returns it in name order without repeats; unset means
 * {@link DEFAULT_BUILTIN_TOOLS}. Throws naming an unknown tool and the known ones.
 *
 * @example selectBuiltinTools(["httpFetch", "getTime"]) // ["getTime", "httpFetch"]
 */
export function selectBuiltinTools(names?: readonly string[]): BuiltinToolName[] {
  if (names === undefined) return [...DEFAULT_BUILTIN_TOOLS];
  for (const name of names) {
    if (!isBuiltinToolName(name)) {
      throw new Error(
        `unknown built-in tool "${name}" in YIEM_BUILTIN_TOOLS (use none, or a comma list of ${BUILTIN_TOOL_NAMES.join(", ")})`,
      );
    }
  }
  return BUILTIN_TOOL_NAMES.filter((name) => names.includes(name));
}

/**
 * Fresh instances of the selected built-ins, in name order. Throws as `selectBuiltinTools`
 * does, or on a bad allow entry.
 */
function createSelectedTools(options: BuiltinToolOptions): AgentTool[] {
  // A bad entry is a start error even while httpFetch is off, so turning it on later works.
  parseFetchAllowList(options.httpFetchAllow ?? []);
  const factories: Record<BuiltinToolName, () => AgentTool> = {
    getTime: getTimeTool,
    getWeather: getWeatherTool,
    httpFetch: () => createHttpFetchTool({ allow: options.httpFetchAllow ?? [] }),
  };
  return selectBuiltinTools(options.builtinTools).map((name) => factories[name]());
}

/** The file a built-in tool lives in (`.ts` from sources, `.js` once built). */
function builtinToolFile(name: string): string {
  const here = fileURLToPath(import.meta.url);
  return join(here, "..", "tools", `${name}${extname(here)}`);
}

/**
 * Registers the selected built-ins (see {@link BuiltinToolOptions}), then `listTools`, in
 * `store`, as `loadTools` would from their files. Throws, before registering anything, on
 * an unknown tool name or a bad `httpFetchAllow` entry: a start error, not a skipped file.
 *
 * @example registerBuiltinTools(store, { builtinTools: ["getTime", "httpFetch"] })
 */
export function registerBuiltinTools(
  store: ToolStore,
  options: BuiltinToolOptions = {},
): LoadToolsResult {
  const tools = createSelectedTools(options);
  const result: LoadToolsResult = { tools: store.tools, loaded: [], skipped: [], failures: [] };
  for (const tool of tools) {
    const path = builtinToolFile(tool.name);
    registerToolFrom(store, tool, path);
    result.loaded.push({ path, toolName: tool.name });
  }
  registerTool(store, listTool(store));
  return result;
}
