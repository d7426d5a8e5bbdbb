#!/usr/bin/env node
/**
 * The coordinator process: reads its settings (docs/CONFIGURATION.md), loads the
 * tools, starts the coordinator with its HTTP side (Bull Board, /healthz, /metrics), and
 * shuts down cleanly on SIGTERM / SIGINT (held sessions finish or are handed over).
 */
import {
  type AgentDefinition,
  AgentsFileError,
  checkAdminCredentials,
  chooseAdminHost,
  createLogger,
  createOpenAILlmCall,
  describeStartFailure,
  keepServingOnUnhandledRejection,
  limitHeapGrowth,
  llmCallOfAgent,
  loadAgentsFile,
  loadPriceTable,
  onShutdownSignal,
  readModelLimits,
  readRunBudget,
  readSettings,
  readTenants,
  redisTargetOf,
  type SettingsOf,
  startCoordinator,
  startTracing,
  ToolStore,
} from "@yiem/core";
import { loadProcessTools } from "@yiem/tools";
import { warnIfNoApiKey } from "./apiKeyWarning.js";

async function main(): Promise<void> {
  const config = readSettings("coordinator"); // a malformed variable stops the start, named
  const tracing = await startTracing("yiem-coordinator"); // a no-op unless OTEL_* ask for traces
  const prices = loadPriceTable(config.pricesFile); // a bad table stops the start, naming the field
  const budget = readRunBudget(config.budgetJson);
  const modelLimits = readModelLimits(config.modelLimitsJson); // a bad value stops the start
  const tenants = readTenants(config.tenantsJson); // a bad value stops the start
  limitHeapGrowth(config.heapGrowthPercent);
  // Refuse half-set Bull Board credentials before taking any session.
  const credentials = checkAdminCredentials(config.adminUser, config.adminPassword);
  const adminHost = chooseAdminHost(config.adminHost, credentials !== undefined);
  const log = createLogger("coordinator", config.logLevel);
  keepServingOnUnhandledRejection(log, "coordinator"); // one input never ends the process
  warnIfNoApiKey(config, log);
  const toolStore = new ToolStore({ name: "coordinator" });
  // YIEM_TOOLS_STRICT=1: a tool file that fails to load stops the start here.
  await loadProcessTools(toolStore, {
    toolsDir: config.toolsDir,
    toolsStrict: config.toolsStrict,
    builtinTools: config.builtinTools,
    httpFetchAllow: config.httpFetchAllow,
    log,
  });
  const agents = await loadAgents(config); // an invalid file stops the start here
  const llmCall = createOpenAILlmCall({
    model: config.model,
    baseURL: config.openaiBaseUrl,
    apiKey: config.openaiApiKey,
    stream: true,
  });
  const coordinator = await startCoordinator({
    redis: redisTargetOf(config),
    prefix: config.prefix,
    shards: config.shards,
    replicaAcks: config.replicaAcks,
    replicaAckTimeoutMs: config.replicaAckTimeoutMs,
    llmCall,
    toolStore,
    systemPrompt: config.systemPrompt,
    prices,
    budget,
    modelLimits,
    ...(config.openaiBaseUrl ? { modelBaseURL: config.openaiBaseUrl } : {}),
    ...(tenants ? { tenants } : {}),
    model: config.model,
    agents,
    concurrency: config.coordinatorConcurrency,
    leaseMs: config.leaseMs,
    approvalTimeoutMs: config.approvalTimeoutMs,
    maxAgentDepth: config.maxAgentDepth,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    aliveTtlMs: config.aliveTtlMs,
    alivePollMs: config.alivePollMs,
    stoppedWorkerGraceMs: config.stoppedWorkerGraceMs,
    requestRetentionS: config.requestRetentionS,
    toolJobRetentionS: config.toolJobRetentionS,
    eventStreamMaxBytes: config.eventStreamMaxBytes,
    logger: log,
    port: config.port,
    host: adminHost,
    http: { maxConnections: config.httpMaxConnections },
    shutdownGraceMs: config.shutdownGraceMs,
    limits: {
      maxToolCalls: config.maxToolCalls,
      maxArgumentBytes: config.maxArgumentBytes,
      maxArgumentDepth: config.maxArgumentDepth,
      maxInputBytes: config.maxInputBytes,
      maxContextBytes: config.maxContextBytes,
    },
    admin: {
      user: config.adminUser,
      password: config.adminPassword,
      readOnly: config.adminReadOnly,
      healthStallMs: config.healthStallMs,
    },
  });
  if (!credentials && !isLoopback(adminHost)) {
    log.warn({ host: adminHost }, "Bull Board is writable by anyone who can reach this address");
  }
  // Hand-over after the grace period, then a few seconds to close; never longer. Before the
  // ready line: a supervisor that stops the process as soon as it reads it gets a clean stop.
  onShutdownSignal(log, () => coordinator.close().finally(() => tracing?.shutdown()), {
    deadlineMs: config.shutdownGraceMs + 5000,
  });
  log.info(
    { url: `${coordinator.url}/admin/queues`, host: adminHost, tools: [...toolStore.tools.keys()] },
    "coordinator ready",
  );
}

/**
 * The agents of `YIEM_AGENTS`, each with its model call (its own server and key, else
 * `OPENAI_BASE_URL` and `OPENAI_API_KEY`); `undefined` without the variable (one agent,
 * `default`, from the environment).
 */
async function loadAgents(
  config: SettingsOf<"coordinator">,
): Promise<AgentDefinition[] | undefined> {
  if (!config.agentsFile) return undefined;
  const defaults = { baseURL: config.openaiBaseUrl, apiKey: config.openaiApiKey, stream: true };
  const file = config.agentsFile;
  const definitions = await loadAgentsFile(file);
  try {
    return definitions.map((definition) => ({
      ...definition,
      llmCall: llmCallOfAgent(definition, defaults),
    }));
  } catch (err) {
    throw new AgentsFileError(file, (err as Error).message); // an apiKeyEnv that is not set
  }
}

/** True for an address only this machine can reach. */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

main().catch((err: unknown) => {
  console.error(`coordinator failed to start: ${describeStartFailure(err, "PORT")}`);
  process.exit(1);
});
