import { notFound } from "../http/gatewayError.js";
import type { GatewayServices } from "../http/route.js";
import { type GatewayKey, seesAllSessions } from "../keys/gatewayKey.js";

/**
 * Resolves when `key` may see session `sessionId`, else throws the 404 of an unknown session
 * (the same answer whether the session exists or not): a key sees the sessions it started and
 * the child runs' sessions of their trees (ownership follows the run: `GatewayStore.ownerOf`),
 * and one with `sessions: "all"` every session the cluster knows.
 */
export async function expectVisibleSession(
  services: GatewayServices,
  key: GatewayKey,
  sessionId: string,
): Promise<void> {
  if (await isVisibleSession(services, key, sessionId)) return;
  throw notFound("session", sessionId);
}

/** Whether `key` may see session `sessionId` (see `expectVisibleSession`). */
export async function isVisibleSession(
  services: GatewayServices,
  key: GatewayKey,
  sessionId: string,
): Promise<boolean> {
  const owner = await services.store.ownerOf(sessionId);
  if (owner === key.name) return true;
  if (!seesAllSessions(key)) return false;
  return owner !== undefined || (await services.client.hasSession(sessionId));
}
