import { DecisionRefusedError, type PendingApproval } from "@yiem/core";
import { GatewayError } from "../http/gatewayError.js";
import { defineRoute, json } from "../http/route.js";
import { seesAllSessions } from "../keys/gatewayKey.js";
import {
  approvalListSchema,
  approvalQuerySchema,
  decisionRequestSchema,
  decisionSchema,
  errorSchema,
} from "../schemas.js";
import { expectVisibleSession } from "./sessionAccess.js";

/** `GET /v1/approvals`: the calls awaiting a decision in the sessions the key sees. */
export const listApprovalsRoute = defineRoute({
  method: "GET",
  path: "/v1/approvals",
  summary:
    "Tool calls awaiting a decision, oldest first, in the sessions this key sees (of one session with ?sessionId=).",
  scope: "read",
  query: approvalQuerySchema,
  responses: {
    200: { description: "the calls awaiting a decision", schema: approvalListSchema },
    404: { description: "no such session for this key", schema: errorSchema },
  },
  async handle({ key, query, services }) {
    if (query.sessionId === undefined && !seesAllSessions(key)) {
      // The key's sessions are the roots of its trees: read from their indexes, never the cluster's.
      const roots = await services.store.ownedSessionIds(key.name);
      return json(200, { approvals: await services.client.pendingApprovalsUnder(roots) });
    }
    if (query.sessionId !== undefined) await expectVisibleSession(services, key, query.sessionId);
    const pending = await services.client.pendingApprovals(query.sessionId);
    if (seesAllSessions(key)) return json(200, { approvals: pending });
    const owners = await services.store.ownersOf(pending.map((p) => p.sessionId));
    const approvals: PendingApproval[] = pending.filter((_, i) => owners[i] === key.name);
    return json(200, { approvals });
  },
});

/** `POST /v1/approvals`: approves or denies a call, recorded with the key's name as `by`. */
export const decideApprovalRoute = defineRoute({
  method: "POST",
  path: "/v1/approvals",
  summary:
    "Approves or denies a tool call awaiting a decision (toolCallId: the callKey GET /v1/approvals lists); recorded with this key's name as `by`. 409 when the call no longer waits or was decided.",
  scope: "approve",
  body: decisionRequestSchema,
  responses: {
    200: { description: "the decision, recorded", schema: decisionSchema },
    403: { description: "the key lacks the approve scope", schema: errorSchema },
    404: { description: "no such session for this key", schema: errorSchema },
    409: { description: "the call no longer waits for a decision", schema: errorSchema },
  },
  async handle({ key, body, services }) {
    await expectVisibleSession(services, key, body.sessionId);
    const options = { by: key.name, ...(body.reason ? { reason: body.reason } : {}) };
    try {
      const decide = body.approved ? services.client.approve : services.client.deny;
      const result = await decide.call(services.client, body.sessionId, body.toolCallId, options);
      await services.store.touchSession(
        body.sessionId,
        (await services.store.ownerOf(body.sessionId)) ?? key.name,
      );
      return json(200, { ...result, by: key.name });
    } catch (err) {
      if (err instanceof DecisionRefusedError) {
        throw new GatewayError(409, "not_waiting", err.message, "toolCallId");
      }
      throw err;
    }
  },
});
