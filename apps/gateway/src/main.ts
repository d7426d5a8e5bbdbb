#!/usr/bin/env node
/**
 * The gateway process: reads its settings (docs/CONFIGURATION.md) and the keys file,
 * refuses to listen beyond loopback without one, serves the HTTP API, and shuts down cleanly
 * on SIGTERM / SIGINT (event streams end; clients resume them on another gateway). With
 * `GATEWAY_OPS_PORT`, serves `/healthz`, `/readyz` and `/metrics` there (docs/METRICS.md).
 */
import { readFileSync } from "node:fs";
import {
  createLogger,
  describeStartFailure,
  keepServingOnUnhandledRejection,
  onShutdownSignal,
  PortInUseError,
  readSetting,
  readSettings,
  redisTargetOf,
} from "@yiem/core";
import { keyCapsOf } from "./keyCaps.js";
import { loadKeysFile } from "./keys/keysFile.js";
import { isLoopbackHost } from "./loopbackHost.js";
import { startGateway } from "./startGateway.js";

async function main(): Promise<void> {
  const config = readSettings("gateway"); // a malformed variable stops the start, named
  const log = createLogger("gateway", config.logLevel);
  keepServingOnUnhandledRejection(log, "gateway"); // one input never ends the process
  const keyCaps = keyCapsOf(config.httpMaxConnections, config);
  const keys = config.apiKeysFile ? loadKeysFile(config.apiKeysFile) : undefined;
  if (!keys && !isLoopbackHost(config.gatewayHost)) {
    throw new Error(
      `GATEWAY_HOST ${config.gatewayHost} is beyond loopback: set YIEM_API_KEYS (a keys file) to serve it`,
    );
  }
  if (!keys)
    log.warn(
      { host: config.gatewayHost },
      "no YIEM_API_KEYS: every request acts as the local key (loopback only)",
    );
  const gateway = await startGateway({
    redis: redisTargetOf(config),
    prefix: config.prefix,
    shards: config.shards,
    maxInputBytes: config.maxInputBytes,
    tenantLine: config.gatewayTenantLine,
    keys,
    keysFile: config.apiKeysFile,
    port: config.gatewayPort,
    host: config.gatewayHost,
    ops:
      config.gatewayOpsPort === undefined
        ? undefined
        : { port: config.gatewayOpsPort, host: config.gatewayOpsHost },
    corsOrigins: config.gatewayCorsOrigins,
    maxBodyBytes: config.gatewayMaxBodyBytes,
    waitMs: config.gatewayWaitMs,
    heartbeatMs: config.gatewayHeartbeatMs,
    streamQueue: { events: config.gatewayStreamQueueEvents, bytes: config.gatewayStreamQueueBytes },
    keyCaps,
    a2aPushHosts: config.gatewayA2aPushHosts,
    http: { maxConnections: config.httpMaxConnections },
    log,
    version: readVersion(),
  });
  // Before the ready line: a supervisor that stops the process as soon as it reads it gets a
  // clean stop.
  onShutdownSignal(log, () => gateway.close(), { deadlineMs: 10_000 });
  log.info(
    {
      url: gateway.url,
      ...(gateway.opsUrl ? { opsUrl: gateway.opsUrl } : {}),
      keys: keys?.map((key) => key.name) ?? ["local"],
    },
    "gateway ready",
  );
}

/** The setting of the port a `PortInUseError` names: the operations port's, or the API's. */
function portVariableOf(err: unknown): string {
  if (!(err instanceof PortInUseError)) return "GATEWAY_PORT";
  // Read only now: the settings were valid, or the start would not have reached a port.
  return err.port === readSetting("gatewayOpsPort") ? "GATEWAY_OPS_PORT" : "GATEWAY_PORT";
}

/** The version in apps/gateway/package.json (`../package.json` from both `src` and `dist`). */
function readVersion(): string {
  const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
  return String((JSON.parse(text) as { version?: unknown }).version ?? "unknown");
}

main().catch((err: unknown) => {
  console.error(`gateway failed to start: ${describeStartFailure(err, portVariableOf(err))}`);
  process.exit(1);
});
