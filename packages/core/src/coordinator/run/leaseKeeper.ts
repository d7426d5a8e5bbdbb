import type { SessionStore } from "../../state/sessionStore.js";

/** Keeps a session's lease alive while its holder works; says when it was lost. */
export interface LeaseKeeper {
  readonly lost: boolean;
  /** Runs `callback` once, when the lease is found lost. */
  onLost(callback: () => void): void;
  stop(): void;
}

/**
 * Renews the lease every third of its duration. A renewal that finds the lease taken marks
 * it lost and calls the `onLost` callbacks once; a renewal that fails because Redis is away
 * is retried at the next tick (the lease may still be ours when Redis is back).
 */
export function keepLease(
  store: SessionStore,
  sessionId: string,
  token: string,
  leaseMs: number,
): LeaseKeeper {
  const callbacks: Array<() => void> = [];
  let lost = false;
  const markLost = () => {
    if (lost) return;
    lost = true;
    clearInterval(timer);
    for (const callback of callbacks.splice(0)) callback();
  };
  const timer = setInterval(
    () => {
      store.renew(sessionId, token, leaseMs).then(
        (ours) => ours || markLost(),
        () => undefined,
      );
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  return {
    get lost() {
      return lost;
    },
    onLost(callback) {
      if (lost) callback();
      else callbacks.push(callback);
    },
    stop: () => clearInterval(timer),
  };
}
