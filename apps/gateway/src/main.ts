#!/usr/bin/env node
/**
 * The gateway process: reads the configuration (the README's table) and the keys file,
 * refuses to listen beyond loopback without one, serves the HTTP API, and shuts down cleanly
 * on SIGTERM / SIGINT (event streams end; clients resume them on another gateway).
 */
import { readFileSync } from "node:fs";
import {
  createLogger,
  describeStartFailure,
  keepServingOnUnhandledRejection,
  onShutdownSignal,
  readClusterConfig,
  redisTargetOf,
} from "@yiem/core";
import { isLoopbackHost, readGatewayConfig } from "./gatewayConfig.js";
import { loadKeysFile } from "./keys/keysFile.js";
import { startGateway } from "./startGateway.js";

async function main(): Promise<void> {
  const cluster = readClusterConfig();
  const config = readGatewayConfig();
  const log = createLogger("gateway", cluster.logLevel);
  keepServingOnUnhandledRejection(log, "gateway"); // one input never ends the process
  const keys = config.keysFile ? loadKeysFile(config.keysFile) : undefined;
  if (!keys && !isLoopbackHost(config.host)) {
    throw new Error(
      `GATEWAY_HOST ${config.host} is beyond loopback: set YIEM_API_KEYS (a keys file) to serve it`,
    );
  }
  if (!keys)
    log.warn(
      { host: config.host },
      "no YIEM_API_KEYS: every request acts as the local key (loopback only)",
    );
  const gateway = await startGateway({
    redis: redisTargetOf(cluster),
    prefix: cluster.prefix,
    shards: cluster.shards,
    maxInputBytes: cluster.maxInputBytes,
    keys,
    keysFile: config.keysFile,
    port: config.port,
    host: config.host,
    corsOrigins: config.corsOrigins,
    maxBodyBytes: config.maxBodyBytes,
    waitMs: config.waitMs,
    heartbeatMs: config.heartbeatMs,
    streamQueue: { events: config.streamQueueEvents, bytes: config.streamQueueBytes },
    keyCaps: { stream: config.keyMaxStreams, long: config.keyMaxLongRequests },
    http: { maxConnections: cluster.httpMaxConnections },
    log,
    version: readVersion(),
  });
  log.info({ url: gateway.url, keys: keys?.map((key) => key.name) ?? ["local"] }, "gateway ready");
  onShutdownSignal(log, () => gateway.close(), { deadlineMs: 10_000 });
}

/** The version in apps/gateway/package.json (`../package.json` from both `src` and `dist`). */
function readVersion(): string {
  const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
  return String((JSON.parse(text) as { version?: unknown }).version ?? "unknown");
}

main().catch((err: unknown) => {
  console.error(`gateway failed to start: ${describeStartFailure(err, "GATEWAY_PORT")}`);
  process.exit(1);
});
