import type { GatewayStore } from "./gatewayStore.js";

/** How long a running MCP call's record is kept at most (a day, as a run's record). */
const CALL_TTL_S = 24 * 3600;

/** How long a cancellation that found no call waits for it (a call that starts late). */
const EARLY_CANCEL_TTL_S = 600;

/** What a cancelled call's record says instead of its run. */
const CANCELLED = "cancelled";

/**
 * One MCP `tools/call` as the gateway knows it across processes: the gateway key that made
 * it, and `<client> <requestId>` (the MCP client's id, its `Mcp-Session-Id`, and the
 * request's JSON-RPC id), which a `notifications/cancelled` names.
 */
export interface McpCallRef {
  keyName: string;
  callId: string;
}

/** The run an MCP call started. */
export interface McpCallRun {
  sessionId: string;
  runId: string;
}

/** The id of the call `requestId` of MCP client `clientId` (`-` when the client sent none). */
export function mcpCallId(clientId: string, requestId: string | number): string {
  return `${clientId} ${String(requestId)}`;
}

/**
 * Records that `ref` runs `run` (kept while it runs, a day at most). Returns `cancelled`
 * when the client cancelled the call before it was recorded (the cancellation stays), else
 * `recorded`.
 */
export async function recordMcpCall(
  store: GatewayStore,
  ref: McpCallRef,
  run: McpCallRun,
): Promise<"recorded" | "cancelled"> {
  const key = store.keys.mcpCall(ref.keyName, ref.callId);
  const value = JSON.stringify(run);
  const before = await store.redis.set(key, value, "EX", CALL_TTL_S, "NX", "GET");
  return before === CANCELLED ? "cancelled" : "recorded";
}

/** Whether the client cancelled call `ref` (read by the gateway that answers it). */
export async function isMcpCallCancelled(store: GatewayStore, ref: McpCallRef): Promise<boolean> {
  return (await store.redis.get(store.keys.mcpCall(ref.keyName, ref.callId))) === CANCELLED;
}

/**
 * Marks call `ref` cancelled and returns the run it had started, if it was recorded; a call
 * not recorded yet (or never made) keeps the mark `EARLY_CANCEL_TTL_S`, so a call that starts
 * after its cancellation is cancelled too. A call of another key is never touched: `ref`
 * names its key.
 */
export async function cancelMcpCall(
  store: GatewayStore,
  ref: McpCallRef,
): Promise<McpCallRun | undefined> {
  const key = store.keys.mcpCall(ref.keyName, ref.callId);
  const before = await store.redis.set(key, CANCELLED, "EX", EARLY_CANCEL_TTL_S, "GET");
  if (before === null || before === CANCELLED) return undefined;
  try {
    return JSON.parse(before) as McpCallRun;
  } catch {
    return undefined;
  }
}

/** Forgets call `ref` once it answered (a cancelled call's mark stays until it expires). */
export async function forgetMcpCall(store: GatewayStore, ref: McpCallRef): Promise<void> {
  const key = store.keys.mcpCall(ref.keyName, ref.callId);
  const value = await store.redis.get(key);
  if (value !== null && value !== CANCELLED) await store.redis.del(key);
}
