import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { type ScriptedRedis, withScripts } from "../../redis/scripts.js";

/** A run's place among its tenant's runs at once, kept while it runs (`TenantRunSlots.keep`). */
export interface KeptRunSlot {
  /** Stops keeping the place and gives it back. Never throws; does not wait for Redis. */
  release(): void;
}

/**
 * Tenants' places for their root runs at once (`runsAtOnce`), shared by every coordinator: a
 * ZSET per tenant in its own hash tag (`keys.tenantRunning`), session → expiry, changed by one
 * script (`tenantRunSlot-1.lua`). A place lives `ttlMs` unless kept: the place of a run whose
 * coordinator died is free again within `ttlMs`. It never blocks and never refuses a run that
 * runs: only `take` looks at the cap.
 */
export class TenantRunSlots {
  private readonly redis: ScriptedRedis;

  constructor(
    redis: RedisClient,
    private readonly keys: ClusterKeys,
    private readonly ttlMs: number,
  ) {
    this.redis = withScripts(redis);
  }

  /**
   * Takes a place for `sessionId` among tenant `tenant`'s runs if it holds one already or
   * fewer than `cap` are held: whether it holds one now. Throws when Redis fails.
   */
  async take(tenant: string, sessionId: string, cap: number): Promise<boolean> {
    return (await this.call("take", tenant, sessionId, cap)) === 1;
  }

  /**
   * Holds a place for `sessionId` whatever the cap (a run that runs counts), renewed every
   * third of its time to live until released. Redis failures are ignored: the next renewal
   * tries again.
   */
  keep(tenant: string, sessionId: string): KeptRunSlot {
    const hold = () => void this.call("keep", tenant, sessionId, 0).catch(() => undefined);
    hold();
    const timer = setInterval(hold, Math.max(1, Math.floor(this.ttlMs / 3)));
    timer.unref();
    return {
      release: () => {
        clearInterval(timer);
        void this.call("release", tenant, sessionId, 0).catch(() => undefined);
      },
    };
  }

  private call(
    what: "take" | "keep" | "release",
    tenant: string,
    sessionId: string,
    cap: number,
  ): Promise<number> {
    const key = this.keys.tenantRunning(tenant);
    return this.redis.yiemTenantRunSlot(key, what, sessionId, cap, this.ttlMs);
  }
}
