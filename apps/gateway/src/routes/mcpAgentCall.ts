import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { AgentEndEvent, BusEvent, PendingApproval } from "@yiem/core";
import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import { forgetMcpCall, type McpCallRef, mcpCallId, recordMcpCall } from "../state/mcpCalls.js";
import { followRun, streamSignal } from "./followRun.js";
import { abortCancelledRun, watchCancel } from "./mcpCallCancel.js";
import {
  awaitingResult,
  type CalledRun,
  detachedResult,
  endedResult,
  failureResult,
} from "./mcpCallResults.js";
import { watchParkedRun } from "./parkedRun.js";
import { startRun } from "./runs.js";

/** What a tool handler of the MCP face is given with each call. */
export type McpCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** One request to the MCP face: who sent it, and how to end it without answering. */
export interface McpRequestContext {
  services: GatewayServices;
  key: GatewayKey;
  res: ServerResponse;
  /** The MCP client's id (the `Mcp-Session-Id` it was given; `-` when it sent none). */
  clientId: string;
  /** Ends the request's MCP connection without an answer (for a cancelled call). */
  drop(): Promise<void>;
}

/** The arguments of an agent's tool. */
export interface AgentToolArgs {
  message: string;
  sessionId?: string;
}

/** How much of a tool's partial result a progress message shows. */
const PARTIAL_MAX_CHARS = 500;

/** How following a call's run ended. */
type Ending =
  | { kind: "ended"; event: AgentEndEvent }
  | { kind: "parked"; pending: PendingApproval[] }
  | { kind: "cancelled" }
  | { kind: "detached" };

/**
 * Answers an MCP `tools/call` of agent `agent`: starts a run with the key's identity as the
 * other faces do (`startRun`, the agent of a new session, a continued session's current one;
 * ownership, scopes, agents and the key's runs at once hold), takes one of the key's long
 * requests, sends `notifications/progress` from the run's tool events when the client gave a
 * `progressToken`, and answers with its result (`mcpCallResults.ts`): the answer, a failure as
 * `isError`, or the calls awaiting approval. A client that goes away leaves the run running;
 * a cancelled call (`notifications/cancelled`, received by any gateway) aborts it durably and
 * gets no answer. Never throws: a refusal is an `isError` result.
 */
export async function callAgentTool(
  context: McpRequestContext,
  agent: string,
  args: AgentToolArgs,
  extra: McpCallExtra,
): Promise<CallToolResult> {
  const { services, key } = context;
  const ref = { keyName: key.name, callId: mcpCallId(context.clientId, extra.requestId) };
  let release: (() => void) | undefined;
  // A call whose client went away keeps its record: a later cancellation still aborts its run.
  let keepRecord = false;
  try {
    release = services.slots.take(key, "long");
    const sessionId = args.sessionId ?? randomUUID();
    const afterSeq = await services.store.latestEventSeq(sessionId);
    const request = { agent, input: args.message, sessionId };
    const run = await startRun(services, key, request, undefined, "newSession");
    const progress = progressSender(extra);
    await progress(`run ${run.runId} started: agent ${run.agent}, session ${run.sessionId}`);
    const early = (await recordMcpCall(services.store, ref, run)) === "cancelled";
    const ending = await followCall(context, ref, run, afterSeq, early, extra, progress);
    if (ending.kind === "cancelled") {
      await abortCancelledRun(services, run);
      await context.drop();
      return { content: [{ type: "text", text: "cancelled" }], isError: true };
    }
    keepRecord = ending.kind === "detached";
    return await resultOf(services, run, ending);
  } catch (err) {
    return failureResult(err, services);
  } finally {
    release?.();
    if (!keepRecord) await forgetMcpCall(services.store, ref).catch(() => undefined);
  }
}

/** Follows `run` until it ends, parks for approval, is cancelled, or the request ends. */
async function followCall(
  context: McpRequestContext,
  ref: McpCallRef,
  run: CalledRun,
  afterSeq: number,
  early: boolean,
  extra: McpCallExtra,
  progress: (message: string) => Promise<void>,
): Promise<Ending> {
  const { services, key, res } = context;
  const stream = streamSignal(services, res, key);
  const parked = watchParkedRun(services, run, afterSeq);
  const cancel = watchCancel(services, ref, early);
  const until = AbortSignal.any([stream.signal, extra.signal, parked.signal, cancel.signal]);
  try {
    for await (const event of followRun(services, run, afterSeq, until, parked.saw)) {
      if (event.type === "agentEnd" && !event.path) return { kind: "ended", event };
      const message = progressMessage(event);
      if (message !== undefined) await progress(message);
    }
    if (cancel.signal.aborted) return { kind: "cancelled" };
    if (parked.signal.aborted) return { kind: "parked", pending: parked.pending };
    return { kind: "detached" };
  } finally {
    parked.stop();
    cancel.stop();
    stream.release();
  }
}

async function resultOf(
  services: GatewayServices,
  run: CalledRun,
  ending: Exclude<Ending, { kind: "cancelled" }>,
): Promise<CallToolResult> {
  if (ending.kind === "parked") return awaitingResult(run, ending.pending);
  if (ending.kind === "detached") return detachedResult(run);
  // After a handoff during the run, the session's agent is the one that answered.
  const agent = (await services.store.agentOf(run.sessionId)) ?? run.agent;
  return endedResult(run, agent, ending.event);
}

/**
 * What sends the call's `notifications/progress`, numbered 1, 2, 3…: nothing when the client
 * gave no `progressToken`; a notification that cannot be sent (the client went away) is left.
 */
function progressSender(extra: McpCallExtra): (message: string) => Promise<void> {
  const token = extra._meta?.progressToken;
  let progress = 0;
  return async (message) => {
    if (token === undefined) return;
    progress += 1;
    const params = { progressToken: token, progress, message };
    await extra.sendNotification({ method: "notifications/progress", params }).catch(() => {});
  };
}

/** The progress message of a run's event: its tool calls' start, progress, end and approvals. */
export function progressMessage(event: BusEvent): string | undefined {
  const where = event.path ? `${event.path.map((link) => link.agent).join(" > ")}: ` : "";
  if (event.type === "toolExecStart")
    return `${where}${event.toolName} started (${event.toolCallId})`;
  if (event.type === "toolExecUpdate") {
    const partial = JSON.stringify(event.partialResult ?? null).slice(0, PARTIAL_MAX_CHARS);
    return `${where}${event.toolName} progress (${event.toolCallId}): ${partial}`;
  }
  if (event.type === "toolExecEnd") {
    const outcome = event.isError ? "failed" : "done";
    const worker = event.workerId ? ` on ${event.workerId}` : "";
    return `${where}${event.toolName} ${outcome} (${event.toolCallId})${worker}`;
  }
  if (event.type === "toolApprovalRequested") {
    return `${where}${event.toolName} awaits approval (${event.callKey})`;
  }
  return undefined;
}
