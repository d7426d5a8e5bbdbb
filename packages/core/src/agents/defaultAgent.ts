import { DEFAULT_AGENT } from "./defineAgent.js";

/**
 * The agent a request naming none starts a new session with, among the agents served
 * (`names`): `default` when one is named so, else the only agent when there is one; else
 * `undefined` (such a request is refused: it must name its agent). Never picks among several.
 *
 * @example defaultAgentOf(["support"]) // "support"; defaultAgentOf(["a", "b"]) // undefined
 */
export function defaultAgentOf(names: readonly string[]): string | undefined {
  if (names.includes(DEFAULT_AGENT)) return DEFAULT_AGENT;
  return names.length === 1 ? names[0] : undefined;
}
