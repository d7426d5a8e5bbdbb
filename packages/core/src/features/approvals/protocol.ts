import { InvalidCoordinatorJobError } from "../../protocol/errors.js";

/**
 * The data of a decisions-queue job (`decisions`, `{decisions}` on a Redis Cluster, under the
 * same BullMQ prefix), which decides on a tool call awaiting approval. Only the approver role
 * may add it (`docs/SECURITY.md`); the same data on the coordinator queue is refused.
 * `toolCallId` is the call's key as `toolApprovalRequested` and `yiem pending` show it; `by`
 * is free text, a label, not an identity.
 *
 * @example await new Queue("decisions", { connection, prefix: "yiem:bull" }).add("decide", { decision: { sessionId: "s-42", toolCallId: "call_1", approved: true, by: "ana" } })
 */
export interface DecisionJobData {
  decision: {
    sessionId: string;
    toolCallId: string;
    approved: boolean;
    reason?: string;
    by?: string;
  };
}

/** A validated decision. */
export interface DecisionRequest {
  sessionId: string;
  callKey: string;
  approved: boolean;
  reason?: string;
  by?: string;
}

/** The return value of a decision job. `resumed`: no undecided call was left, the run goes on. */
export interface DecisionJobResult {
  sessionId: string;
  toolCallId: string;
  approved: boolean;
  resumed: boolean;
}

const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_TEXT = 2000;

/**
 * True when a job's data is a decision (`{ decision: … }`), not a request: coordinators
 * refuse such a job on the coordinator queue (decisions have a queue of their own).
 */
export function isDecisionJob(data: unknown): boolean {
  return typeof data === "object" && data !== null && "decision" in data;
}

function readText(value: unknown, field: string, max = MAX_TEXT): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.length > max)
    throw new InvalidCoordinatorJobError(field, `must be a string of at most ${max} characters`);
  return value;
}

/**
 * Reads a decision job's data; throws `InvalidCoordinatorJobError` naming the field
 * (`decision.sessionId`, `decision.toolCallId`, `decision.approved`, …). Never trusts more
 * than these fields.
 */
export function readDecisionJob(data: unknown): DecisionRequest {
  const decision = (data as { decision?: unknown }).decision;
  if (typeof decision !== "object" || decision === null || Array.isArray(decision))
    throw new InvalidCoordinatorJobError(
      "decision",
      "must be an object like { sessionId, toolCallId, approved }",
    );
  const fields = decision as Record<string, unknown>;
  if (typeof fields.sessionId !== "string" || !SESSION_ID.test(fields.sessionId))
    throw new InvalidCoordinatorJobError("decision.sessionId", "must be a session id");
  const callKey = readText(fields.toolCallId, "decision.toolCallId", 512);
  if (!callKey) throw new InvalidCoordinatorJobError("decision.toolCallId", "is required");
  if (typeof fields.approved !== "boolean")
    throw new InvalidCoordinatorJobError("decision.approved", "must be a boolean");
  const reason = readText(fields.reason, "decision.reason");
  const by = readText(fields.by, "decision.by", 200);
  return {
    sessionId: fields.sessionId,
    callKey,
    approved: fields.approved,
    ...(reason ? { reason } : {}),
    ...(by ? { by } : {}),
  };
}
