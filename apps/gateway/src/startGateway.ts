import {
  closeServer,
  clusterKeys,
  connectRedis,
  createHttpServer,
  type HttpServerOptions,
  keyLayoutOf,
  type Logger,
  listenOn,
  type RedisConnectionOptions,
  YiemClient,
} from "@yiem/core";
import { createDispatcher } from "./http/dispatch.js";
import { createFileKeyRing, createKeyRing } from "./keys/authenticate.js";
import type { GatewayKey } from "./keys/gatewayKey.js";
import { watchKeysFile } from "./keys/keysFileWatch.js";
import { createGatewayMetrics } from "./ops/gatewayMetrics.js";
import { checkGatewayReadiness } from "./ops/gatewayReadiness.js";
import { type OpsServerHandle, startOpsServer } from "./ops/opsServer.js";
import { startPushDelivery } from "./push/a2aPushDelivery.js";
import { gatewayRoutes } from "./routes/index.js";
import { GatewayStore } from "./state/gatewayStore.js";
import { createKeySlots, type SlotCaps } from "./state/keySlots.js";

/** Options of `startGateway`. */
export interface GatewayOptions extends RedisConnectionOptions, HttpServerOptions {
  prefix: string;
  maxInputBytes?: number;
  /** Line the runs up fairly per key owner in the coordinator queue (`YiemClientOptions.tenantLine`). */
  tenantLine?: boolean;
  /** The keys of the keys file; `undefined`: every request acts as the local key. */
  keys: GatewayKey[] | undefined;
  /** The keys file `keys` came from: read again whenever it changes (`watchKeysFile`). */
  keysFile?: string;
  port: number;
  host: string;
  /**
   * The operations side (`/healthz`, `/readyz`, `/metrics`) on a port of its own
   * (`GATEWAY_OPS_PORT`, `GATEWAY_OPS_HOST`); none when absent.
   */
  ops?: { port: number; host: string };
  corsOrigins: readonly string[];
  maxBodyBytes: number;
  waitMs: number;
  heartbeatMs: number;
  /** Bounds of each event stream's queue for its reader (`GATEWAY_STREAM_QUEUE_EVENTS`, `_BYTES`). */
  streamQueue: { events: number; bytes: number };
  /** Per-key caps on open event streams and long requests on this gateway (`GATEWAY_KEY_MAX_*`). */
  keyCaps: SlotCaps;
  /** The hosts A2A push notification webhooks may name (`YIEM_A2A_PUSH_HOSTS`); none: push is off. */
  a2aPushHosts?: readonly string[];
  log: Logger;
  version: string;
}

/** A running gateway. */
export interface GatewayHandle {
  url: string;
  port: number;
  /** The operations side's URL, when it has one (`GatewayOptions.ops`). */
  opsUrl?: string;
  /** Stops taking requests, ends the event streams, closes the connections. */
  close(): Promise<void>;
}

/**
 * Starts the gateway: a `YiemClient` and a Redis connection for its own state, the routes of
 * `routes/`, an HTTP server with the limits every Yiem HTTP side has (`createHttpServer`),
 * and, with a keys file, a watch that reads it again when it changes (`watchKeysFile`); with
 * `ops`, the operations side (`startOpsServer`), listening before the API does; with push
 * hosts allowed, its share of A2A push notification delivery (`startPushDelivery`).
 */
export async function startGateway(options: GatewayOptions): Promise<GatewayHandle> {
  const client = new YiemClient({
    redis: options.redis,
    prefix: options.prefix,
    shards: options.shards,
    maxInputBytes: options.maxInputBytes,
    tenantLine: options.tenantLine,
  });
  const redis = connectRedis(options.redis, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
  redis.on("error", () => undefined); // each request reports its own failure
  const store = new GatewayStore(
    redis,
    clusterKeys(options.prefix, keyLayoutOf(options.redis, options.shards)),
  );
  const fileRing = options.keys ? createFileKeyRing(options.keys) : undefined;
  const keyRing = fileRing ?? createKeyRing(undefined);
  const stopWatching =
    fileRing && options.keysFile
      ? watchKeysFile(options.keysFile, fileRing, options.log)
      : () => undefined;
  const closing = new AbortController();
  const services = {
    client,
    store,
    log: options.log,
    waitMs: options.waitMs,
    heartbeatMs: options.heartbeatMs,
    closing: closing.signal,
    revocation: (key: GatewayKey) => keyRing.revocation(key),
    slots: createKeySlots(options.keyCaps, options.keys === undefined),
    streamQueue: options.streamQueue,
    a2aPushHosts: options.a2aPushHosts ?? [],
  };
  const metrics = createGatewayMetrics();
  const ops: OpsServerHandle | undefined =
    options.ops &&
    (await startOpsServer({
      ...options.ops,
      metrics,
      limits: options.http,
      health: () => ({ version: options.version }),
      readiness: () =>
        checkGatewayReadiness({
          redis,
          keyCount: () => fileRing?.names().length,
          closing: closing.signal,
        }),
    }));
  const handler = createDispatcher(gatewayRoutes(options.version), {
    services,
    metrics,
    keyRing,
    corsOrigins: options.corsOrigins,
    maxBodyBytes: options.maxBodyBytes,
    localOnly: options.keys === undefined,
  });
  const server = createHttpServer(handler, options.http);
  // Every gateway delivers A2A push notifications (of any task, claimed with a lease in Redis).
  const push = services.a2aPushHosts.length > 0 ? startPushDelivery(services) : undefined;
  const port = await listenOn(server, options.port, options.host).catch(async (err: unknown) => {
    await ops?.close();
    await push?.stop();
    throw err;
  });
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    opsUrl: ops?.url,
    async close() {
      stopWatching();
      closing.abort(); // /readyz says "shutting down" from here on
      await closeServer(server);
      await push?.stop();
      await client.close();
      redis.disconnect();
      await ops?.close();
    },
  };
}
