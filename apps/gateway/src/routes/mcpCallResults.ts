import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AgentEndEvent, PendingApproval } from "@yiem/core";
import { toGatewayError } from "../http/dispatch.js";
import type { GatewayServices } from "../http/route.js";
import type { PlannedRun } from "./runs.js";

/** A run as an MCP call's result names it: its ids and the agent that answers. */
export type CalledRun = PlannedRun & { agent: string };

/**
 * The result of a call whose run ended: the text of its final answer, and as
 * `structuredContent` `{ status, agent, runId, sessionId, stopReason, usage, output? }`. A run
 * that failed, was aborted or stopped by its budget is `isError: true`, the reason in its text.
 */
export function endedResult(run: CalledRun, agent: string, end: AgentEndEvent): CallToolResult {
  const { response, usage, output } = end;
  const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  const status = statusOf(response.stopReason);
  const structuredContent = {
    status,
    agent,
    runId: run.runId,
    sessionId: run.sessionId,
    stopReason: response.stopReason,
    usage,
    ...(output !== undefined ? { output } : {}),
  };
  if (status === "completed") {
    return { content: [{ type: "text", text }], structuredContent };
  }
  const reason =
    status === "failed"
      ? `the run failed: ${response.errorMessage ?? "no reason given"}`
      : status === "aborted"
        ? "the run was aborted"
        : `the run stopped: ${response.errorMessage ?? "its budget ran out"}`;
  const content = text === "" ? reason : `${text}\n\n[${reason}]`;
  return { content: [{ type: "text", text: content }], structuredContent, isError: true };
}

function statusOf(stopReason: string): "completed" | "failed" | "aborted" | "stopped" {
  if (stopReason === "error") return "failed";
  if (stopReason === "aborted") return "aborted";
  if (stopReason === "budget") return "stopped";
  return "completed";
}

/**
 * The result of a call whose run waits for a person's decision (not an error: the run goes
 * on once decided): which calls wait, where, and how to decide them; the run's answer is then
 * at `GET /v1/runs/{runId}`, and a call with `sessionId` continues the session.
 */
export function awaitingResult(run: CalledRun, pending: PendingApproval[]): CallToolResult {
  const calls = pending
    .map((call) => `${call.toolName} (sessionId "${call.sessionId}", toolCallId "${call.callKey}")`)
    .join(", ");
  const text = `[awaiting approval] The run ${run.runId} waits for a person's decision on ${calls}. Decide each with POST /v1/approvals { sessionId, toolCallId, approved } (a key with the approve scope) or \`yiem approve <sessionId> <toolCallId>\`; the run then resumes on the cluster, and its answer is at GET /v1/runs/${run.runId}. Call this tool again with sessionId "${run.sessionId}" to continue the conversation.`;
  const approvals = pending.map((call) => ({
    sessionId: call.sessionId,
    toolCallId: call.callKey,
    toolName: call.toolName,
    ...(call.reason !== undefined ? { reason: call.reason } : {}),
  }));
  const structuredContent = {
    status: "awaiting_approval",
    agent: run.agent,
    runId: run.runId,
    sessionId: run.sessionId,
    approvals,
  };
  return { content: [{ type: "text", text }], structuredContent };
}

/** The result of a call the gateway stopped following (it shuts down, or its key was revoked). */
export function detachedResult(run: CalledRun): CallToolResult {
  const text = `the gateway stopped following run ${run.runId} (it goes on): its answer will be at GET /v1/runs/${run.runId}`;
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * The result of a call that could not start or follow its run, as the REST routes would
 * answer it: the gateway's refusal (`403 forbidden: this key may not use agent "ops"`, `429`,
 * `404` of another key's session, the coordinators' `run_refused`…), `503` without Redis,
 * or `500 internal` (logged).
 */
export function failureResult(err: unknown, services: GatewayServices): CallToolResult {
  const failure = toGatewayError(err, services);
  const text = `${failure.status} ${failure.code}: ${failure.message}`;
  return { content: [{ type: "text", text }], isError: true };
}
