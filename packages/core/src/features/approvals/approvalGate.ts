import { createErrorToolResult } from "../../tools/toolResults.js";
import type { ExecutedOutcome } from "../../types/index.js";
import type { CallWait, WaitDecision, WaitingCall } from "../runFeature.js";
import type { ApprovalStore } from "./approvalStore.js";

/** The text the model reads for a denied call. */
export function denialText(decision: WaitDecision): string {
  const by = decision.by ? ` by ${decision.by}` : "";
  return `The call was not run: denied${by}: ${decision.reason ?? "no reason given"}`;
}

/** The decision as kept in the tool result's `details.approval`. */
function approvalDetails(call: WaitingCall, decision: WaitDecision) {
  return {
    decision: decision.approved ? "approved" : "denied",
    ...(decision.by ? { by: decision.by } : {}),
    ...(decision.reason ? { reason: decision.reason } : {}),
    decidedAt: new Date(decision.decidedAt).toISOString(),
    requested: call.approval?.reason,
  };
}

function withDetails(outcome: ExecutedOutcome, details: Record<string, unknown>): ExecutedOutcome {
  const result = { ...outcome.result, details: { ...outcome.result.details, approval: details } };
  return { ...outcome, result };
}

/** What the approval gate of one run needs. */
export interface ApprovalGateOptions {
  approvals: ApprovalStore;
  sessionId: string;
  runId: string;
  token: string;
  /** Deny a waiting call on its own after this long, unless its tool says otherwise. */
  defaultTimeoutMs?: number;
}

/**
 * Human approval as a `CallWait`: claims the calls that need approval (`prep.approval`). One
 * approved runs (its result carries `details.approval`); one denied gets an error result with
 * the reason; one not decided yet is recorded as awaiting approval (announced with
 * `toolApprovalRequested` the first time) and waits. Throws when Redis fails (the call waits).
 */
export function createApprovalGate(options: ApprovalGateOptions): CallWait {
  return {
    claims: (call) => call.approval !== undefined,
    async settle(call, decision) {
      if (!decision) {
        await requestApproval(options, call);
        return { kind: "waiting" };
      }
      const details = approvalDetails(call, decision);
      if (decision.approved) {
        return { kind: "run", decided: true, decorate: (o) => withDetails(o, details) };
      }
      const denied = { result: createErrorToolResult(denialText(decision)), isError: true };
      return { kind: "answered", decided: true, outcome: withDetails(denied, details) };
    },
  };
}

/** Records the call as awaiting approval and announces it the first time. */
async function requestApproval(options: ApprovalGateOptions, call: WaitingCall): Promise<void> {
  const now = Date.now();
  const timeoutMs = call.approvalTimeoutMs ?? options.defaultTimeoutMs;
  const deadline = timeoutMs && timeoutMs > 0 ? now + timeoutMs : undefined;
  const reason = call.approval?.reason ?? "approval required";
  const recorded = await options.approvals.request(options.sessionId, options.token, {
    callKey: call.key,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: call.args,
    reason,
    runId: options.runId,
    requestedAt: now,
    ...(deadline ? { deadline } : {}),
  });
  if (recorded !== "new") return;
  await call.emit({
    type: "toolApprovalRequested",
    toolCallId: call.toolCallId,
    callKey: call.key,
    toolName: call.toolName,
    arguments: call.args,
    reason,
    ...(deadline ? { deadline } : {}),
  });
}
