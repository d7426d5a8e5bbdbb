import { remoteQueueOf } from "../../protocol/toolQueues.js";
import type { AgentTool, ExecutionContext } from "../../types/index.js";

/** What a coordinator knows of a worker-only tool (announced by workers, not loaded here). */
export interface WorkerOnlyTool {
  /** The tool has its own `prepareArguments` / `validateRequiredArgs`: the worker runs them. */
  prepareOnWorker: boolean;
}

/**
 * Where a call runs: in this process, or as a job on tool queue `queue` (`undefined`: the
 * default one). `prepareOnWorker` asks the worker to prepare and validate the arguments.
 */
export type ToolPlacement =
  | { kind: "local" }
  | { kind: "remote"; queue: string | undefined; prepareOnWorker: boolean };

/**
 * Places a call of `tool`: on the workers when its batch is parallel, when the tool has a
 * queue of its own (`remoteQueueOf`: an explicit `queue` or a cluster-wide limit), or when it
 * is a worker-only tool (`workerOnly`: this coordinator has no code for it, whatever the
 * batch); in this process otherwise (a sequential batch's calls of local tools).
 *
 * @example placeToolCall(getTime, { mode: "sequential" }, () => undefined) // { kind: "local" }
 */
export function placeToolCall(
  tool: AgentTool,
  context: ExecutionContext | undefined,
  workerOnly: (tool: AgentTool) => WorkerOnlyTool | undefined,
): ToolPlacement {
  const onlyOnWorkers = workerOnly(tool);
  const queue = remoteQueueOf(tool);
  if (context?.mode !== "parallel" && !queue && !onlyOnWorkers) return { kind: "local" };
  return { kind: "remote", queue, prepareOnWorker: onlyOnWorkers?.prepareOnWorker ?? false };
}
