import { fileURLToPath } from "node:url";
import { readGivenSetting } from "@yiem/core";
import { startClusterProcesses, type TestProcess } from "@yiem/testing";

/** The repository root, where the apps' entry points are. */
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The demo's processes: one coordinator, three tool workers. */
export interface DemoCluster {
  coordinator: TestProcess;
  workers: TestProcess[];
  boardUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts one coordinator (on `PORT` when set, else a free port) and `workerCount` tool workers
 * from their TypeScript sources as child processes with `env` (Redis, model, tool settings),
 * and waits until each says it is ready.
 */
export async function startDemoCluster(
  env: Record<string, string>,
  workerCount = 3,
): Promise<DemoCluster> {
  const port = readGivenSetting("port"); // the demo's coordinator serves Bull Board there
  const processes = await startClusterProcesses({
    cwd: repoRoot,
    launch: "source",
    env: { ...env, LOG_LEVEL: "info" },
    roleEnv: {
      coordinator: port === undefined ? {} : { PORT: String(port) },
      worker: { WORKER_CONCURRENCY: "2" },
    },
    workers: workerCount,
    readyTimeoutMs: 60_000,
  });
  const [coordinator] = processes.coordinators;
  if (!coordinator) throw new Error("the demo cluster started no coordinator");
  return {
    coordinator: coordinator.current(),
    workers: processes.workers.map((slot) => slot.current()),
    boardUrl: `${coordinator.url}/admin/queues`,
    stop: () => processes.close(10_000),
  };
}
