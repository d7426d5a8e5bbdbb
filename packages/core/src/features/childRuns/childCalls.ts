import { randomUUID } from "node:crypto";
import type { ServedAgent } from "../../agents/agentRegistry.js";
import type { CoordinatorJobData } from "../../protocol/coordinatorJob.js";
import { createErrorToolResult } from "../../tools/toolResults.js";
import type { ExecutedOutcome, RunBudget } from "../../types/index.js";
import type { WaitingCall } from "../runFeature.js";
import { childInputOf } from "./agentCallTools.js";
import type { ChildRunStore } from "./childRunStore.js";
import { type AgentPathLink, childJobId, type ParentCall } from "./protocol.js";

/** Where a session stands in its tree: its root, its depth (0: the root itself), the way down to it. */
export interface TreePlace {
  rootSessionId: string;
  depth: number;
  path: AgentPathLink[];
  /** The root's run the tree belongs to (unknown for a child started by an older version). */
  rootRunId?: string;
}

/** What starting the child runs of one run needs. */
export interface ChildCallOptions {
  children: ChildRunStore;
  sessionId: string;
  runId: string;
  token: string;
  place: TreePlace;
  /** The deepest a child may be (`YIEM_MAX_AGENT_DEPTH`). */
  maxDepth: number;
  /** The agents this session's agent may call, by name. */
  callees: ReadonlyMap<string, ServedAgent>;
  /** Adds a coordinator job (idempotent by `jobId`). */
  submit: (data: CoordinatorJobData, jobId: string) => Promise<void>;
  /** What is left of the run's budget now: the child's budget (`undefined`: no limit). */
  remainingBudget: () => RunBudget | undefined;
  /** Reserves a child's start (its session) from what the run shares (its tree's budget): why not, or `undefined`. */
  reserveStart: (childSessionId: string) => Promise<string | undefined>;
}

/** The root's run of the tree: this run for a root, else what the parent call said. */
function rootRunOf(options: ChildCallOptions): string | undefined {
  return options.place.depth === 0 ? options.runId : options.place.rootRunId;
}

/** The error result of a call that would go deeper than the cap. */
function pastDepthCap(agent: string, maxDepth: number): ExecutedOutcome {
  const text = `agent "${agent}" was not called: the call is past the depth cap of ${maxDepth} nested agents (YIEM_MAX_AGENT_DEPTH)`;
  return { result: createErrorToolResult(text), isError: true };
}

/**
 * Starts the child run of an `agent__<name>` call: records the call as waiting for a new
 * child session (once: a resumed batch finds the first one), then submits the child's request
 * to the coordinator queue under a job id made from that session, so a second submission adds
 * nothing. Any coordinator runs it; its answer comes back as the call's outcome
 * (`ChildRunStore.deliver`). A call past the depth cap, or of an agent not callable here, gets
 * an error result instead. Throws when Redis fails (the call then waits: see the executor).
 */
export async function startChildCall(
  options: ChildCallOptions,
  call: WaitingCall,
  agent: string,
): Promise<ExecutedOutcome | "waiting"> {
  const key = call.key;
  const callee = options.callees.get(agent);
  if (!callee) {
    const text = `agent "${agent}" may not be called by this agent`;
    return { result: createErrorToolResult(text), isError: true };
  }
  const depth = options.place.depth + 1;
  if (depth > options.maxDepth) return pastDepthCap(agent, options.maxDepth);
  const proposed = `${agent}-${randomUUID()}`;
  const refused = await options.reserveStart(proposed);
  if (refused) {
    const text = `agent "${agent}" was not called: the tree's budget was reached: ${refused}`;
    return { result: createErrorToolResult(text), isError: true };
  }
  const recorded = await options.children.request(options.sessionId, options.token, {
    callKey: key,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: call.args,
    reason: `child run of agent "${agent}"`,
    runId: options.runId,
    requestedAt: Date.now(),
    child: { agent, sessionId: proposed },
  });
  if (recorded === "lost") return "waiting"; // its next holder starts it
  const childSessionId = recorded.child.sessionId;
  const parent: ParentCall = {
    sessionId: options.sessionId,
    callKey: key,
    rootSessionId: options.place.rootSessionId,
    depth,
    path: [...options.place.path, { agent, sessionId: childSessionId, callKey: key }],
    ...(rootRunOf(options) ? { rootRunId: rootRunOf(options) } : {}),
  };
  const budget = options.remainingBudget();
  await options.submit(
    {
      agent,
      input: childInputOf(call.args, callee.definition.inputSchema),
      sessionId: childSessionId,
      parent,
      ...(budget ? { budget } : {}),
    },
    childJobId(childSessionId),
  );
  return "waiting";
}
