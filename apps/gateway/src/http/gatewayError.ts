import { type RetryIntent, YiemError } from "@yiem/core";

/** The statuses a gateway error answers with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 503;

/**
 * A request the gateway refuses: its HTTP status, a stable `code` clients branch on, a message
 * for people, the request field at fault (`input`, `budget.maxTokens`), and extra headers
 * (`Retry-After`). Sent as `{ error: { code, message, field? } }`, never with a stack.
 * Transient for 429 and 503 (trying again later may succeed), terminal otherwise.
 */
export class GatewayError extends YiemError {
  override name = "GatewayError";
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message, { retry: retryOfStatus(status) });
  }
}

/** Statuses that say "not now" rather than "not this": the client may try again later. */
const TRANSIENT_STATUSES = new Set<ErrorStatus>([429, 503]);

function retryOfStatus(status: ErrorStatus): RetryIntent {
  return TRANSIENT_STATUSES.has(status) ? "transient" : "terminal";
}

/** The 404 of a session, run or call the key may not see: the same whether it exists or not. */
export function notFound(what: string, id: string): GatewayError {
  return new GatewayError(404, "not_found", `${what} ${id} not found`);
}
