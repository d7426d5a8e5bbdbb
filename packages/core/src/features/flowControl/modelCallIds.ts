import { randomUUID } from "node:crypto";

/**
 * Who asks for a model call's turn under a shared provider limit: the coordinator and the
 * agent. Carried in the call's id in Redis, so a reader of the limit (`readProviderLimits`,
 * `yiem limits`) sees who waits without another key. More fields (a tenant) may follow.
 */
export interface ModelCaller {
  coordinatorId: string;
  agent: string;
}

/** The separator of a call id's parts; each part is URI-encoded, so never holds it. */
const SEP = "/";

/** A fresh call id naming `caller`: `<coordinator>/<agent>/<uuid>`, each part URI-encoded. */
export function modelCallId(caller: ModelCaller): string {
  return [caller.coordinatorId, caller.agent, randomUUID()].map(encodeURIComponent).join(SEP);
}

/**
 * The caller a call id names (`modelCallId`); `undefined` for an id of another shape (a call
 * id given by hand, or by an older coordinator).
 */
export function parseModelCallId(callId: string): ModelCaller | undefined {
  const parts = callId.split(SEP);
  if (parts.length !== 3) return undefined;
  try {
    const [coordinatorId = "", agent = ""] = parts.map(decodeURIComponent);
    return { coordinatorId, agent };
  } catch {
    return undefined;
  }
}
