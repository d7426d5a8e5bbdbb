import type { RedisClient } from "@yiem/core";

/** Whether the gateway can serve requests now; `reason` is one line when it cannot. */
export type GatewayReadiness = { ready: true } | { ready: false; reason: string };

/** What `checkGatewayReadiness` looks at. */
export interface GatewayReadinessProbe {
  /** The gateway's own Redis connection. */
  redis: RedisClient;
  /** The keys it serves now (`undefined`: no keys file, every request is the local key). */
  keyCount: () => number | undefined;
  /** True once the gateway is shutting down. */
  closing: AbortSignal;
  /** The deadline of the PING. @defaultValue 1000 */
  timeoutMs?: number;
}

/** The default deadline of a readiness check's PING. */
export const GATEWAY_READINESS_TIMEOUT_MS = 1000;

/**
 * Connection states worth a PING: up, or coming up (its PING waits in the offline queue for
 * the connection's ready check). A probe right after the gateway starts on a busy machine
 * finds its connection here, and ready a few milliseconds later.
 */
const COMING_UP: ReadonlySet<string> = new Set(["ready", "connect", "connecting"]);

/**
 * Ready when the gateway is not shutting down, serves at least one key (or runs without a
 * keys file) and Redis answers a PING within `timeoutMs`. A connection neither up nor coming
 * up (reconnecting after a drop, closed) fails at once, sending nothing. The reason names what failed, never an address or a key. Never
 * throws; never waits longer than the deadline.
 */
export async function checkGatewayReadiness(
  probe: GatewayReadinessProbe,
): Promise<GatewayReadiness> {
  if (probe.closing.aborted) return { ready: false, reason: "shutting down" };
  if (probe.keyCount() === 0) return { ready: false, reason: "no keys loaded" };
  if (!COMING_UP.has(probe.redis.status)) {
    return { ready: false, reason: `redis unreachable (connection ${probe.redis.status})` };
  }
  const timeoutMs = probe.timeoutMs ?? GATEWAY_READINESS_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<GatewayReadiness>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({ ready: false, reason: `redis unreachable (no PING answer in ${timeoutMs} ms)` }),
      timeoutMs,
    );
  });
  const ping = probe.redis.ping().then(
    (): GatewayReadiness => ({ ready: true }),
    (): GatewayReadiness => ({ ready: false, reason: "redis unreachable (PING failed)" }),
  );
  try {
    return await Promise.race([ping, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
