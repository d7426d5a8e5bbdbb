import { GatewayError } from "../http/gatewayError.js";
import type { GatewayKey } from "../keys/gatewayKey.js";

/** What a request holds a connection for: an event stream, or a wait for a run's answer. */
export type SlotKind = "stream" | "long";

/** How many of each kind one key may hold at once on this gateway. */
export interface SlotCaps {
  stream: number;
  long: number;
}

/** The connections each key holds on this gateway, by kind. */
export interface KeySlots {
  /**
   * Takes a slot of `kind` for `key`; throws `GatewayError` 429 when the key holds its cap
   * already. Returns what gives it back (idempotent).
   */
  take(key: GatewayKey, kind: SlotKind): () => void;
}

/** The setting that caps each kind, named in the 429. */
const SETTING: Record<SlotKind, string> = {
  stream: "GATEWAY_KEY_MAX_STREAMS",
  long: "GATEWAY_KEY_MAX_LONG_REQUESTS",
};

/** What a 429 of each kind says the key holds. */
const WHAT: Record<SlotKind, string> = {
  stream: "event streams open",
  long: "requests waiting on an answer",
};

/**
 * Per-key caps, in this process, on the requests that hold a connection open (event streams;
 * `?wait=true` and the chat faces), below the gateway's connection cap: one key filling its
 * caps leaves the other keys' requests room. Counted per gateway, as the connection cap is.
 * With `unlimited` (no keys file: every request is the one local key) nothing is capped.
 */
export function createKeySlots(caps: SlotCaps, unlimited = false): KeySlots {
  const held = new Map<string, number>();
  return {
    take(key, kind) {
      if (unlimited) return () => undefined;
      const id = `${kind} ${key.name}`;
      const count = held.get(id) ?? 0;
      if (count >= caps[kind]) {
        throw new GatewayError(
          429,
          kind === "stream" ? "too_many_streams" : "too_many_long_requests",
          `this key has ${caps[kind]} ${WHAT[kind]} on this gateway (${SETTING[kind]}); end one and retry`,
          undefined,
          { "Retry-After": "1" },
        );
      }
      held.set(id, count + 1);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        const left = (held.get(id) ?? 1) - 1;
        if (left > 0) held.set(id, left);
        else held.delete(id);
      };
    },
  };
}
