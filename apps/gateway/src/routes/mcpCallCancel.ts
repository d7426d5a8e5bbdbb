import type { GatewayServices } from "../http/route.js";
import type { GatewayKey } from "../keys/gatewayKey.js";
import {
  cancelMcpCall,
  isMcpCallCancelled,
  type McpCallRef,
  type McpCallRun,
  mcpCallId,
} from "../state/mcpCalls.js";

/** How often the gateway answering an MCP call looks whether its client cancelled it. */
const CANCEL_CHECK_MS = 400;

/** How long a cancelled call's run is waited for to be taken in by a coordinator, to abort it. */
const ABORT_WAIT_MS = 60_000;

/** A watch of one MCP call's cancellation, which another gateway may have received. */
export interface CancelWatch {
  /** Fires once the call's client cancelled it. */
  signal: AbortSignal;
  /** Stops looking. */
  stop(): void;
}

/**
 * Looks every `CANCEL_CHECK_MS` whether call `ref` was cancelled (its mark in Redis, set by
 * whichever gateway received the `notifications/cancelled`); fires at once when `already`.
 */
export function watchCancel(
  services: GatewayServices,
  ref: McpCallRef,
  already: boolean,
): CancelWatch {
  const cancelled = new AbortController();
  if (already) cancelled.abort();
  let timer: NodeJS.Timeout | undefined;
  let stopped = already;
  const look = async () => {
    const yes = await isMcpCallCancelled(services.store, ref).catch(() => false);
    if (stopped) return;
    if (yes) return cancelled.abort();
    timer = setTimeout(look, CANCEL_CHECK_MS);
  };
  if (!already) timer = setTimeout(look, CANCEL_CHECK_MS);
  return {
    signal: cancelled.signal,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Aborts `run` durably (recorded in its session, as `POST /v1/sessions/{id}/abort` does) once
 * a coordinator took it in: a run still queued has no open run to abort yet, so this looks
 * again every 250 ms, `ABORT_WAIT_MS` at most. Returns whether the abort was recorded for it.
 */
export async function abortCancelledRun(
  services: GatewayServices,
  run: McpCallRun,
): Promise<boolean> {
  for (const until = Date.now() + ABORT_WAIT_MS; Date.now() < until; ) {
    if (await abortIfOpen(services, run)) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  services.log.warn(
    { sessionId: run.sessionId, runId: run.runId },
    "a cancelled MCP call's run was not taken in: not aborted",
  );
  return false;
}

/** Aborts `run` if it is its session's open run; whether the abort was recorded for it. */
async function abortIfOpen(services: GatewayServices, run: McpCallRun): Promise<boolean> {
  if ((await services.store.openRunOf(run.sessionId)) !== run.runId) return false;
  const outcome = await services.client.abort(run.sessionId);
  return outcome.kind === "recorded" && outcome.runId === run.runId;
}

/**
 * Records the cancellations a request carries (`notifications/cancelled`, alone or in a
 * batch) for `key`'s calls of MCP client `clientId`, and aborts each cancelled call's run
 * when a coordinator holds it already (else the gateway answering the call does, once it is
 * taken in). A cancellation of a call not started yet is kept, so the call is cancelled when
 * it starts. Another key's calls are never reached: the record is the key's.
 */
export async function cancelNotifiedCalls(
  services: GatewayServices,
  key: GatewayKey,
  clientId: string,
  body: unknown,
): Promise<void> {
  for (const requestId of cancelledRequestIds(body)) {
    const ref = { keyName: key.name, callId: mcpCallId(clientId, requestId) };
    const run = await cancelMcpCall(services.store, ref);
    services.log.info({ key: key.name, requestId, runId: run?.runId }, "MCP call cancelled");
    if (run) await abortIfOpen(services, run);
  }
}

/** The request ids the `notifications/cancelled` messages of `body` name. */
function cancelledRequestIds(body: unknown): Array<string | number> {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((message) => {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: unknown };
    if (method !== "notifications/cancelled") return [];
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    return typeof requestId === "string" || typeof requestId === "number" ? [requestId] : [];
  });
}
