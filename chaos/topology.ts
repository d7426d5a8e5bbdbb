import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type ProcessSlot,
  type ScriptedModelServer,
  startClusterProcesses,
  startScriptedModelServer,
} from "@yiem/testing";
import { respondToChaos } from "./model.js";
import { chaosDir, repoRoot } from "./paths.js";
import { type RedisUnderTest, startRedisUnderTest } from "./redisUnderTest.js";

/** The soak's processes and servers. */
export interface Topology {
  redis: RedisUnderTest;
  model: ScriptedModelServer;
  coordinators: ProcessSlot[];
  workers: ProcessSlot[];
  /** The ledger file the chaos tools append each execution to. */
  ledgerPath: string;
  /** Where the processes' logs are. */
  logDir: string;
  stop(): Promise<void>;
}

/** Options of `startTopology`. */
export interface TopologyOptions {
  coordinators: number;
  workers: number;
  cluster: boolean;
  /** A folder of the soak's own (ledger, logs); made when missing. */
  runDir: string;
}

/**
 * Starts the soak's topology (on the production lock, stalled check and lease: a dead process
 * is noticed by the coordinators' failure detector): a Redis with AOF (or a Redis Cluster), the scripted model
 * answering chaos inputs, and the coordinators and workers as deployed (`node
 * apps/…/dist/main.bundle.js`, tool files from chaos/tools, the agents of chaos/agents.yaml: the
 * sessions' agent may call a child agent), each in a restartable slot of `startClusterProcesses`
 * whose log lines go to `<runDir>/logs/<slot>.log`.
 */
export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const logDir = join(options.runDir, "logs");
  await mkdir(logDir, { recursive: true });
  const ledgerPath = join(options.runDir, "ledger.txt");
  await writeFile(ledgerPath, "");
  const redis = await startRedisUnderTest(options.cluster);
  const model = await startScriptedModelServer({ respond: respondToChaos });
  const base: Record<string, string> = {
    ...redis.env,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-chaos",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: join(chaosDir, "tools"),
    YIEM_AGENTS: join(chaosDir, "agents.yaml"),
    YIEM_CHAOS_LEDGER: ledgerPath,
    LOG_LEVEL: "info",
    // The production lock, stalled check and lease: the failure detector notices dead processes.
  };
  const processes = await startClusterProcesses({
    cwd: repoRoot,
    launch: "compiled",
    env: base,
    coordinators: options.coordinators,
    workers: options.workers,
    logDir,
    readyTimeoutMs: 180_000, // a loaded machine starts five processes at once slowly
  }).catch(async (err: unknown) => {
    await model.close();
    await redis.stop();
    throw err;
  });
  const stop = async () => {
    await processes.close(3000);
    await model.close();
    await redis.stop();
  };
  const { coordinators, workers } = processes;
  return { redis, model, coordinators, workers, ledgerPath, logDir, stop };
}
