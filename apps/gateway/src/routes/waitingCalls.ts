import { type DecisionJobResult, DecisionRefusedError, type PendingApproval } from "@yiem/core";
import { GatewayError } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";

/**
 * How a face names a call awaiting approval of `sessionId`'s tree: its call key for a call of
 * the session itself, `<child session>/<call key>` for a call in one of its child runs (session
 * ids hold no `/`). `locateWaitingCall` takes either.
 */
export function approvalIdOf(sessionId: string, call: PendingApproval): string {
  return call.sessionId === sessionId ? call.callKey : `${call.sessionId}/${call.callKey}`;
}

/**
 * The call awaiting approval that `callId` names in `sessionId`'s tree (its call key, or an
 * `approvalIdOf` id): the session's own call first, else the one call of a child run with that
 * key or id; `undefined` when none waits. Two child runs' calls with the same key are a 409
 * asking for the `<session>/<call key>` id. Never decides anything.
 */
export async function locateWaitingCall(
  services: GatewayServices,
  sessionId: string,
  callId: string,
  field: string,
): Promise<PendingApproval | undefined> {
  const pending = await services.client.pendingApprovals(sessionId);
  const own = pending.find((p) => p.sessionId === sessionId && p.callKey === callId);
  if (own) return own;
  const matches = pending.filter(
    (p) => p.callKey === callId || approvalIdOf(sessionId, p) === callId,
  );
  if (matches.length > 1) {
    const ids = matches.map((p) => approvalIdOf(sessionId, p)).join(", ");
    throw new GatewayError(
      409,
      "ambiguous_call",
      `calls of several child runs have the key "${callId}": name one as ${ids}`,
      field,
    );
  }
  return matches[0];
}

/** One decision on a call awaiting approval, as a face took it. */
export interface FaceDecision {
  callId: string;
  approved: boolean;
  reason?: string;
}

/**
 * Records `decision` on the call it names in `sessionId`'s tree (see `locateWaitingCall`), in
 * the session where the call waits (a child run's own, for a child's call), with `by` as who
 * decided. Returns the call decided and what recording it did (the call `undefined` when `callId` named none in the tree: it is
 * then decided in `sessionId`, which refuses it with a 409 unless it waits there). A call
 * that no longer waits is a 409 naming `field`.
 */
export async function decideWaitingCall(
  services: GatewayServices,
  sessionId: string,
  decision: FaceDecision,
  by: string,
  field: string,
): Promise<{ call: PendingApproval | undefined; result: DecisionJobResult }> {
  const call = await locateWaitingCall(services, sessionId, decision.callId, field);
  const target = call ?? { sessionId, callKey: decision.callId };
  return { call, result: await decideCall(services, target, decision, by, field) };
}

/**
 * Records `decision` on the call `callKey` of session `sessionId` (where it waits), with `by`
 * as who decided. A call that no longer waits is a 409 naming `field`.
 */
export async function decideCall(
  services: GatewayServices,
  call: { sessionId: string; callKey: string },
  decision: FaceDecision,
  by: string,
  field: string,
): Promise<DecisionJobResult> {
  const options = { by, ...(decision.reason ? { reason: decision.reason } : {}) };
  const decide = decision.approved ? services.client.approve : services.client.deny;
  try {
    return await decide.call(services.client, call.sessionId, call.callKey, options);
  } catch (err) {
    if (err instanceof DecisionRefusedError) {
      throw new GatewayError(409, "not_waiting", err.message, field);
    }
    throw err;
  }
}
