import { ConfigError, DEFAULT_HTTP_LIMITS } from "@yiem/core";

/** The gateway's own settings (the README's table); Redis and logging come from `readClusterConfig`. */
export interface GatewayConfig {
  /** `GATEWAY_PORT` (8080). */
  port: number;
  /** `GATEWAY_HOST` (127.0.0.1). Beyond loopback only with a keys file. */
  host: string;
  /** `YIEM_API_KEYS`: the keys file; without it, loopback only and every request acts as the local key. */
  keysFile: string | undefined;
  /** `GATEWAY_CORS_ORIGINS`: comma-separated origins browsers may call from (none by default). */
  corsOrigins: string[];
  /** `GATEWAY_MAX_BODY_BYTES`: the largest request body (1 MiB + 64 KiB: an input at the coordinators' cap, and its JSON). */
  maxBodyBytes: number;
  /** `GATEWAY_WAIT_MS`: how long `?wait=true` waits for an answer before answering 202 (25 s). */
  waitMs: number;
  /** `GATEWAY_HEARTBEAT_MS`: how often an event stream sends a comment (15 s). */
  heartbeatMs: number;
  /** `GATEWAY_STREAM_QUEUE_EVENTS`: events an event stream holds for its reader, not yet sent (256). */
  streamQueueEvents: number;
  /** `GATEWAY_STREAM_QUEUE_BYTES`: bytes of events an event stream holds for its reader, not yet sent (1 MiB). */
  streamQueueBytes: number;
  /**
   * `GATEWAY_KEY_MAX_STREAMS`: event streams one key may hold open on this gateway (a quarter
   * of `YIEM_HTTP_MAX_CONNECTIONS`: 64); must be below it.
   */
  keyMaxStreams: number;
  /**
   * `GATEWAY_KEY_MAX_LONG_REQUESTS`: requests one key may have waiting on an answer at once on
   * this gateway (`?wait=true`, the chat faces; an eighth of `YIEM_HTTP_MAX_CONNECTIONS`: 32);
   * must be below it.
   */
  keyMaxLongRequests: number;
}

/** Reads the gateway's settings from `env`; throws `ConfigError` naming a bad variable. */
export function readGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return {
    port: readInt(env, "GATEWAY_PORT", 8080),
    host: env.GATEWAY_HOST?.trim() || "127.0.0.1",
    keysFile: env.YIEM_API_KEYS?.trim() || undefined,
    corsOrigins: (env.GATEWAY_CORS_ORIGINS ?? "")
      .split(",")
      .map((origin) => origin.trim())
      .filter(Boolean),
    maxBodyBytes: readInt(env, "GATEWAY_MAX_BODY_BYTES", 1024 * 1024 + 64 * 1024),
    waitMs: readInt(env, "GATEWAY_WAIT_MS", 25_000),
    heartbeatMs: readInt(env, "GATEWAY_HEARTBEAT_MS", 15_000),
    streamQueueEvents: readPositiveInt(env, "GATEWAY_STREAM_QUEUE_EVENTS", 256),
    streamQueueBytes: readPositiveInt(env, "GATEWAY_STREAM_QUEUE_BYTES", 1024 * 1024),
    ...readKeyCaps(env),
  };
}

/**
 * The per-key caps on open streams and long requests: by default a quarter and an eighth of
 * the gateway's connection cap (`YIEM_HTTP_MAX_CONNECTIONS`), so one key never fills it;
 * throws `ConfigError` for a cap at or above it.
 */
function readKeyCaps(
  env: NodeJS.ProcessEnv,
): Pick<GatewayConfig, "keyMaxStreams" | "keyMaxLongRequests"> {
  const connections = readPositiveInt(
    env,
    "YIEM_HTTP_MAX_CONNECTIONS",
    DEFAULT_HTTP_LIMITS.maxConnections,
  );
  const caps = {
    keyMaxStreams: readPositiveInt(
      env,
      "GATEWAY_KEY_MAX_STREAMS",
      Math.max(1, Math.floor(connections / 4)),
    ),
    keyMaxLongRequests: readPositiveInt(
      env,
      "GATEWAY_KEY_MAX_LONG_REQUESTS",
      Math.max(1, Math.floor(connections / 8)),
    ),
  };
  for (const [name, value] of [
    ["GATEWAY_KEY_MAX_STREAMS", caps.keyMaxStreams],
    ["GATEWAY_KEY_MAX_LONG_REQUESTS", caps.keyMaxLongRequests],
  ] as const) {
    if (value >= connections) {
      throw new ConfigError(
        `${name} (${value}) must be below YIEM_HTTP_MAX_CONNECTIONS (${connections}), so one key cannot take every connection`,
      );
    }
  }
  return caps;
}

/** True for an address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

function readPositiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = readInt(env, name, fallback);
  if (value === 0) throw new ConfigError(`${name} must be a positive integer, got 0`);
  return value;
}

function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new ConfigError(`${name} must be a non-negative integer, got "${text}"`);
  return value;
}
