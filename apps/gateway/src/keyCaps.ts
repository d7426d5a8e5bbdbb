import { ConfigError } from "@yiem/core";

/** The per-key caps on open event streams and on requests waiting on an answer. */
export interface KeyCaps {
  stream: number;
  long: number;
}

/**
 * The per-key caps on open streams and long requests: as set, or by default a quarter and an
 * eighth of the gateway's connection cap (`YIEM_HTTP_MAX_CONNECTIONS`), so one key never fills
 * it. Throws `ConfigError` for a cap at or above it.
 */
export function keyCapsOf(
  connections: number,
  set: { gatewayKeyMaxStreams?: number; gatewayKeyMaxLongRequests?: number },
): KeyCaps {
  const caps = {
    stream: set.gatewayKeyMaxStreams ?? Math.max(1, Math.floor(connections / 4)),
    long: set.gatewayKeyMaxLongRequests ?? Math.max(1, Math.floor(connections / 8)),
  };
  for (const [name, value] of [
    ["GATEWAY_KEY_MAX_STREAMS", caps.stream],
    ["GATEWAY_KEY_MAX_LONG_REQUESTS", caps.long],
  ] as const) {
    if (value >= connections) {
      throw new ConfigError(
        `${name} (${value}) must be below YIEM_HTTP_MAX_CONNECTIONS (${connections}), so one key cannot take every connection`,
      );
    }
  }
  return caps;
}
