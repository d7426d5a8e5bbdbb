import { randomUUID } from "node:crypto";
import { sleep } from "../../llm/retryPolicy.js";
import type { CallTenant, ProviderLimit } from "./providerLimit.js";

/**
 * Waits at least this long are shortened by a random share of up to a half: calls far back in
 * a long line, told to come back at the same moment, would otherwise all ask at once (every
 * ask costs Redis a script) and delay the ask of a call at the head. Asking early is harmless.
 */
const SPREAD_FROM_MS = 1000;

/** The sleep before asking again after being told `waitMs`: long waits spread out. */
function sleepBeforeAsking(waitMs: number): number {
  return waitMs < SPREAD_FROM_MS ? waitMs : Math.round(waitMs * (0.5 + Math.random() / 2));
}

/** A call's turn, once it came: the id its settlement names. */
export interface Turn {
  callId: string;
  /** True when it came at once (no wait, so no confirmation when it is sent). */
  atOnce: boolean;
}

/**
 * Waits for a model call's turn under `limit`, reserving `tokens`, in `tenant`'s line (tenants
 * are served in turn, by their shares): asks Redis, sleeps as long as it says (a wait of a
 * second or more by a random half less, so a long line's calls do not all ask at once), asks again
 * until the call is admitted (a 429 told before it was sent puts it back at the head of the
 * line after the pause), and resolves the turn. Resolves `undefined` when `signal` fired during the wait (the
 * turn is given back, best effort). Rejects when Redis fails (the turn, if any, is lost).
 * `callId` names the call in Redis (`modelCallId` names who asks); a random one by default.
 * `onWait` is told when the call first has to sleep, and what it returns when the wait ends
 * (however it ends).
 */
export async function waitForTurn(
  limit: ProviderLimit,
  tokens: number,
  signal: AbortSignal | undefined,
  tenant?: CallTenant,
  callId: string = randomUUID(),
  onWait?: () => () => void,
): Promise<Turn | undefined> {
  let endWait: (() => void) | undefined;
  try {
    for (let asked = 0; ; asked++) {
      const waitMs = await limit.admit(callId, tokens, tenant);
      if (waitMs <= 0) return { callId, atOnce: asked === 0 };
      endWait ??= onWait?.();
      if (!(await sleep(sleepBeforeAsking(waitMs), signal))) {
        await limit.cancel(callId).catch(() => undefined);
        return undefined;
      }
    }
  } finally {
    endWait?.();
  }
}
