#!/usr/bin/env node
/**
 * The tool worker process: reads its settings (docs/CONFIGURATION.md), loads the tools, serves the tool
 * queues of `YIEM_QUEUES` with `WORKER_CONCURRENCY` calls at once, and on SIGTERM / SIGINT
 * drains its running calls before exiting. With `WORKER_PORT`, serves `/healthz` and
 * `/metrics` there. With `YIEM_MCP_CONFIG`, the tools of those MCP servers too (an invalid
 * file stops the start; the clients close after the drain). Scale by starting more of them.
 */
import {
  createLogger,
  describeStartFailure,
  keepServingOnUnhandledRejection,
  type McpToolSource,
  onShutdownSignal,
  readMcpConfig,
  readSettings,
  redisTargetOf,
  startMcpToolSource,
  startToolWorker,
  startTracing,
  ToolStore,
} from "@yiem/core";
import { loadProcessTools } from "@yiem/tools";

async function main(): Promise<void> {
  const config = readSettings("worker"); // a malformed variable stops the start, named
  const tracing = await startTracing("yiem-worker"); // a no-op unless OTEL_* ask for traces
  const mcpConfig = config.mcpConfig ? readMcpConfig(config.mcpConfig) : undefined;
  const log = createLogger("tool-worker", config.logLevel);
  keepServingOnUnhandledRejection(log, "tool-worker"); // one input never ends the process
  const toolStore = new ToolStore({ name: "tool-worker" });
  // YIEM_TOOLS_STRICT=1: a tool file that fails to load stops the start here.
  await loadProcessTools(toolStore, {
    toolsDir: config.toolsDir,
    toolsStrict: config.toolsStrict,
    builtinTools: config.builtinTools,
    httpFetchAllow: config.httpFetchAllow,
    log,
  });
  // Before the worker starts: the queues it serves follow the tools it has (limited ones).
  const mcp: McpToolSource | undefined =
    mcpConfig && (await startMcpToolSource({ config: mcpConfig, toolStore, logger: log }));
  const worker = await startToolWorker({
    redis: redisTargetOf(config),
    prefix: config.prefix,
    shards: config.shards,
    toolStore,
    queues: config.queues,
    concurrency: config.workerConcurrency,
    takeAtOnce: config.workerTakeAtOnce,
    workerId: config.workerId,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    aliveTtlMs: config.aliveTtlMs,
    eventStreamMaxBytes: config.eventStreamMaxBytes,
    limitedLockDurationMs: config.limitedLockDurationMs,
    logger: log,
    port: config.workerPort,
    host: config.workerHost,
    http: { maxConnections: config.httpMaxConnections },
  });
  // Running calls drain for up to YIEM_WORKER_DRAIN_MS; a call still running then is re-run
  // elsewhere (as after a crash), within its tool's retries.
  const stop = () =>
    worker
      .close()
      .finally(() => mcp?.close())
      .finally(() => tracing?.shutdown());
  // Before the ready line: a supervisor that stops the process as soon as it reads it gets a
  // clean stop.
  onShutdownSignal(log, stop, {
    deadlineMs: config.workerDrainMs,
  });
  log.info(
    {
      workerId: worker.workerId,
      queues: config.queues,
      tools: [...toolStore.tools.keys()],
      ...(worker.url ? { url: worker.url } : {}),
    },
    "tool worker ready",
  );
}

main().catch((err: unknown) => {
  console.error(`tool worker failed to start: ${describeStartFailure(err, "WORKER_PORT")}`);
  process.exit(1);
});
