import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { withScripts } from "../../redis/scripts.js";
import type { ResolvedModelLimit } from "./modelLimits.js";

/**
 * The part of a window kept as a margin (at least `MIN_GUARD_MS`): a call's turn is counted
 * `window + guard` long, so requests that reach the provider later than their turn (a new
 * connection's handshake, the network, a busy event loop) still never crowd one of its windows.
 */
const GUARD_SHARE = 0.02;
const MIN_GUARD_MS = 250;

/** The tenant a call is made for, and its share of a limit when others wait too. */
export interface CallTenant {
  /** The tenant's name; calls for no tenant share one line of their own. */
  name: string;
  /** Its weight against the other tenants waiting (a number above 0). @defaultValue 1 */
  share?: number;
}

/** The line of calls made for no tenant. */
const NO_TENANT = "-";

/**
 * One shared provider limit in Redis, as every coordinator sees it (`admitModelCall-6.lua`,
 * `settleModelCall-5.lua`): a log of the calls sent and their tokens, a fair queue of the
 * calls waiting (tenants served in turn, by their shares; first come first served within a
 * tenant), and the time the provider's last 429 pauses every call until. Every method is one
 * script call; Redis errors reject, named by the limit.
 *
 * @example
 * const limit = new ProviderLimit(redis, keys, limitOfModel(limits, "gpt-4o")!);
 * const waitMs = await limit.admit("call-1", 1200, { name: "acme" }); // 0: send now
 */
export class ProviderLimit {
  private readonly keys: string[];
  private readonly windowMs: number;

  constructor(
    private readonly redis: RedisClient,
    keys: ClusterKeys,
    readonly limit: ResolvedModelLimit,
  ) {
    const { calls, tokens, pausedUntil, waiting, wants, clock } = keys.modelLimit(limit.name);
    this.keys = [calls, tokens, pausedUntil, waiting, wants, clock];
    this.windowMs =
      limit.windowMs + Math.max(MIN_GUARD_MS, Math.ceil(limit.windowMs * GUARD_SHARE));
  }

  /**
   * Asks whether call `callId` (of `tokens`, for `tenant`) may be sent now: the first ask puts
   * it in line, later asks confirm it. Resolves 0 when it may be sent now, else the ms to wait
   * before asking again.
   */
  admit(callId: string, tokens: number, tenant?: CallTenant): Promise<number> {
    const { requests, tokens: maxTokens } = this.limit;
    return this.run(() =>
      withScripts(this.redis).yiemAdmitModelCall(
        ...this.keys,
        callId,
        tokens,
        requests,
        maxTokens,
        this.windowMs,
        tenant?.name ?? NO_TENANT,
        tenant?.share ?? 1,
      ),
    );
  }

  /**
   * Sets call `callId`'s tokens to what its answer reported. `fromNow`: the call is counted
   * from now on (its answer) instead of its turn: for a call sent at once, whose request may
   * have reached the provider well after its turn.
   */
  async settle(callId: string, tokens: number, fromNow = false): Promise<void> {
    await this.settleAs(callId, fromNow ? "tokensFromNow" : "tokens", tokens);
  }

  /** Gives back the turn of a call that was never sent (its wait was aborted). */
  async cancel(callId: string): Promise<void> {
    await this.settleAs(callId, "cancel", 0);
  }

  /** Records that the provider refused call `callId` (no tokens) and pauses every call `pauseMs`. */
  async refused(callId: string, pauseMs: number): Promise<void> {
    await this.settleAs(callId, "refused", Math.max(0, Math.round(pauseMs)));
  }

  private settleAs(callId: string, what: string, amount: number): Promise<number> {
    return this.run(() =>
      withScripts(this.redis).yiemSettleModelCall(
        ...this.keys.slice(0, 5),
        callId,
        what,
        amount,
        this.windowMs,
      ),
    );
  }

  private async run<T>(script: () => Promise<T>): Promise<T> {
    try {
      return await script();
    } catch (err) {
      throw new Error(`provider limit "${this.limit.name}": ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}
