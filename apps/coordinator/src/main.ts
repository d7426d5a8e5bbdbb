/**
 * The coordinator process: reads the configuration (DESIGN.md "Configuration"), loads the
 * tools, starts the coordinator and its HTTP server (Bull Board, /healthz, /metrics), and
 * shuts down cleanly on SIGTERM / SIGINT (held sessions finish or are handed over).
 */
import {
  createCoordinatorMetrics,
  createLogger,
  createOpenAILlmCall,
  onShutdownSignal,
  readClusterConfig,
  startAdminServer,
  startCoordinator,
  ToolStore,
} from "@yiem/core";
import { loadBuiltinAndExtraTools } from "@yiem/tools";

async function main(): Promise<void> {
  const config = readClusterConfig();
  const log = createLogger("coordinator", config.logLevel);
  const toolStore = new ToolStore({ name: "coordinator" });
  for (const failure of await loadBuiltinAndExtraTools(toolStore, config.toolsDir)) {
    log.warn(failure, "tool file skipped");
  }
  const metrics = createCoordinatorMetrics();
  const llmCall = createOpenAILlmCall({
    model: config.model,
    baseURL: config.openaiBaseUrl,
    apiKey: config.openaiApiKey,
    stream: true,
  });
  const coordinator = await startCoordinator({
    redis: config.redisUrl,
    prefix: config.prefix,
    llmCall: metrics.timeLlmCall(llmCall),
    toolStore,
    systemPrompt: config.systemPrompt,
    concurrency: config.coordinatorConcurrency,
    leaseMs: config.leaseMs,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    logger: log,
    observe: (event) => metrics.observe(event),
  });
  const admin = await startAdminServer({
    port: config.port,
    queues: () => coordinator.queues(),
    metrics,
    health: () => ({
      coordinatorId: coordinator.coordinatorId,
      heldSessions: coordinator.heldSessions(),
    }),
    adminUser: config.adminUser,
    adminPassword: config.adminPassword,
    readOnly: config.adminReadOnly,
  });
  log.info(
    { url: `${admin.url}/admin/queues`, tools: [...toolStore.tools.keys()] },
    "coordinator ready",
  );
  onShutdownSignal(log, async () => {
    await coordinator.close(config.shutdownGraceMs);
    await admin.close();
  });
}

main().catch((err: unknown) => {
  console.error(`coordinator failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
