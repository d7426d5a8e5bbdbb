import { fileURLToPath } from "node:url";
import { freePort, logMessage, spawnTypeScript, type TestProcess } from "@yiem/testing";

/** The repository root, where the apps' entry points are. */
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The demo's processes: one coordinator, three tool workers. */
export interface DemoCluster {
  coordinator: TestProcess;
  workers: TestProcess[];
  boardUrl: string;
  stop(): Promise<void>;
}

/** Runs an app of the repo from its TypeScript sources (workspace packages from theirs too). */
function spawnApp(entry: string, env: Record<string, string>): TestProcess {
  return spawnTypeScript(entry, env, { cwd: repoRoot, conditions: ["yiem-source"] });
}

/**
 * Starts one coordinator and `workerCount` tool workers as child processes with `env`
 * (Redis, model, tool settings), and waits until each says it is ready.
 */
export async function startDemoCluster(
  env: Record<string, string>,
  workerCount = 3,
): Promise<DemoCluster> {
  const port = process.env.PORT ?? String(await freePort());
  const coordinator = spawnApp("apps/coordinator/src/main.ts", {
    ...env,
    PORT: port,
    LOG_LEVEL: "info",
  });
  const workers = Array.from({ length: workerCount }, (_, i) =>
    spawnApp("apps/tool-worker/src/main.ts", {
      ...env,
      YIEM_WORKER_ID: `worker-${i + 1}`,
      WORKER_CONCURRENCY: "2",
      LOG_LEVEL: "info",
    }),
  );
  const all = [coordinator, ...workers];
  try {
    await Promise.all([
      coordinator.waitForLine(logMessage("coordinator ready"), 30_000),
      ...workers.map((worker) => worker.waitForLine(logMessage("tool worker ready"), 30_000)),
    ]);
  } catch (err) {
    await Promise.all(all.map((p) => p.stop(1000)));
    throw err;
  }
  return {
    coordinator,
    workers,
    boardUrl: `http://127.0.0.1:${port}/admin/queues`,
    stop: async () => void (await Promise.all(all.map((p) => p.stop(10_000)))),
  };
}
