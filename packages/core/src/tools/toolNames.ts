import { YiemError } from "../errors/yiemError.js";

/**
 * What a tool may be called: what the OpenAI API allows for a function name. A tool's name
 * also becomes part of a queue name (`tools-tool.<name>` for a limited tool) and of Redis
 * keys, where a `:` or a brace would break them.
 */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * What a tool's `queue` may be called: it becomes a BullMQ queue name (`tools-<queue>`), which
 * BullMQ refuses with a `:`, and a hash tag on a Redis Cluster, which a brace would break.
 */
export const TOOL_QUEUE_PATTERN = /^[a-zA-Z0-9_.-]{1,64}$/;

/**
 * What the tools offering agent calls are named with: `agent__<agent>` (agents calling
 * agents). No other tool may have a name that starts with it: a coordinator would take a call
 * of it for an agent call, or the agent call for it.
 */
export const AGENT_TOOL_PREFIX = "agent__";

/** Thrown by `registerTool` for a tool it refuses; the message names the tool and the rule. Terminal. */
export class InvalidToolError extends YiemError {
  override name = "InvalidToolError";
  constructor(
    readonly toolName: string,
    problem: string,
  ) {
    super(`tool ${JSON.stringify(toolName)} refused: ${problem}`, { context: { toolName } });
  }
}

/**
 * What is wrong with a tool's `name` or `queue` (the value's own name in the message), or
 * `undefined` when both are usable: by the model API, as queue names and in Redis keys, and a
 * name that does not start with `AGENT_TOOL_PREFIX` (`agent__`, the agent calls' own).
 *
 * @example describeBadToolNaming({ name: "a:b" }) // 'tool.name "a:b" must match ^[a-zA-Z0-9_-]{1,64}$ …'
 */
export function describeBadToolNaming(tool: {
  name?: unknown;
  queue?: unknown;
}): string | undefined {
  if (typeof tool.name !== "string" || !TOOL_NAME_PATTERN.test(tool.name)) {
    return `tool.name ${JSON.stringify(tool.name)} must match ${TOOL_NAME_PATTERN.source} (what the OpenAI API allows for function names; it is also part of queue names and Redis keys)`;
  }
  if (tool.name.startsWith(AGENT_TOOL_PREFIX)) {
    return `tool.name "${tool.name}" starts with "${AGENT_TOOL_PREFIX}", which names agent calls (agents calling agents); rename the tool`;
  }
  if (tool.queue === undefined) return undefined;
  if (typeof tool.queue !== "string" || !TOOL_QUEUE_PATTERN.test(tool.queue)) {
    return `tool.queue ${JSON.stringify(tool.queue)} of tool "${tool.name}" must match ${TOOL_QUEUE_PATTERN.source} (it becomes a BullMQ queue name)`;
  }
  return undefined;
}
