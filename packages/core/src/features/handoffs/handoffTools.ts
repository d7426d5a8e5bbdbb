import { LiveToolMap } from "../../agents/liveToolMap.js";
import type { AgentMessage, AgentTool, AgentToolResult } from "../../types/index.js";

/** What every handoff tool's name starts with: `transfer_to_<agent>`. */
export const HANDOFF_TOOL_PREFIX = "transfer_to_";

/**
 * The name of the tool that hands a session over to `agent`.
 *
 * @example handoffToolName("billing") // "transfer_to_billing"
 */
export function handoffToolName(agent: string): string {
  return `${HANDOFF_TOOL_PREFIX}${agent}`;
}

/** The agent a handoff tool's name transfers to, or `undefined` for any other tool name. */
export function handoffTargetOf(toolName: string): string | undefined {
  if (!toolName.startsWith(HANDOFF_TOOL_PREFIX)) return undefined;
  return toolName.slice(HANDOFF_TOOL_PREFIX.length) || undefined;
}

/** An agent another agent may hand off to: its name and what it does (the tool's description). */
export interface HandoffTarget {
  name: string;
  description?: string;
}

/**
 * What runs when the model calls `transfer_to_<to>` (the run's holder records the handoff):
 * the call's result, or a throw (an error result: a second transfer of one batch, say).
 */
export type TransferFn = (to: string, toolCallId: string) => AgentToolResult;

/** The result text of a transfer that took: what the model reads for its `transfer_to_` call. */
export function transferredText(to: string): string {
  return `transferred to ${to}`;
}

function transferTool(target: HandoffTarget, transfer: TransferFn): AgentTool {
  const about = target.description ? `: ${target.description}` : ".";
  return {
    name: handoffToolName(target.name),
    label: `Transfer to ${target.name}`,
    description: `Hand the conversation over to agent "${target.name}"${about}`,
    inputSchema: { type: "object", properties: {} },
    // Runs in the coordinator, one at a time in call order, so the batch's first transfer wins.
    parallelToolExecute: false,
    idempotent: true, // it only records the handoff in memory: a resumed batch runs it again
    execute: (toolCallId) => transfer(target.name, toolCallId),
  };
}

/** The tool a call to `transfer_to_<to>` finds when `to` is not among the agent's handoffs. */
function refusedTransferTool(from: string, to: string, listed: readonly string[]): AgentTool {
  return {
    name: handoffToolName(to),
    label: `Transfer to ${to}`,
    description: `Not a handoff of agent "${from}".`,
    inputSchema: { type: "object", properties: {} },
    parallelToolExecute: false,
    execute: () => {
      throw new Error(
        `agent "${from}" may not hand off to "${to}" (its handoffs: ${listed.join(", ")})`,
      );
    },
  };
}

/**
 * The tools of an agent with handoffs: a live view of its own tools (`tools`) with one
 * `transfer_to_<name>` per handoff target added. Every `transfer_to_` name belongs to the
 * handoffs: a tool of that name in `tools` is hidden, and a call naming an agent that is not
 * a target finds a tool that refuses it (an error result naming the agent's handoffs), never
 * "not found". Only the targets' tools are listed and offered to the model.
 *
 * @example new HandoffToolView(tools, "support", [{ name: "billing" }], transfer).has("transfer_to_billing") // true
 */
export class HandoffToolView extends LiveToolMap {
  private readonly transfers = new Map<string, AgentTool>();
  private readonly listed: readonly string[];

  constructor(
    private readonly tools: Map<string, AgentTool>,
    private readonly from: string,
    targets: readonly HandoffTarget[],
    transfer: TransferFn,
  ) {
    super();
    this.listed = targets.map((target) => target.name);
    for (const target of targets)
      this.transfers.set(handoffToolName(target.name), transferTool(target, transfer));
  }

  override get(name: string): AgentTool | undefined {
    const to = handoffTargetOf(name);
    if (to === undefined) return this.tools.get(name);
    return this.transfers.get(name) ?? refusedTransferTool(this.from, to, this.listed);
  }

  override has(name: string): boolean {
    return handoffTargetOf(name) === undefined ? this.tools.has(name) : this.transfers.has(name);
  }

  override *entries(): MapIterator<[string, AgentTool]> {
    for (const [name, tool] of this.tools)
      if (handoffTargetOf(name) === undefined) yield [name, tool];
    yield* this.transfers.entries();
  }
}

/** A handoff a batch made: its target, and the `transfer_to_` call that made it. */
export interface BatchHandoff {
  to: string;
  toolCallId: string;
}

/**
 * The handoff a batch's results make: its first `transfer_to_` result that is not an error
 * and names one of `handoffs`, or `undefined`. The results decide (not what ran in memory), so
 * a batch resumed from stored outcomes hands off as it would have.
 *
 * @example findHandoff(batch, ["billing"]) // { to: "billing", toolCallId: "call_1" }
 */
export function findHandoff(
  messages: readonly AgentMessage[],
  handoffs: readonly string[] | undefined,
): BatchHandoff | undefined {
  if (!handoffs || handoffs.length === 0) return undefined;
  for (const message of messages) {
    if (message.role !== "toolResult" || message.isError) continue;
    const to = handoffTargetOf(message.toolName);
    if (to !== undefined && handoffs.includes(to)) return { to, toolCallId: message.toolCallId };
  }
  return undefined;
}
