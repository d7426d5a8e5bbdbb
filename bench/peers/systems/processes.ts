/**
 * Starting the peers' own processes: `bench/peers/processes/*.ts` compiled to
 * `bench/peers/dist/processes/*.js` (`tsconfig.processes.json`, done by the `--peers` command)
 * and run with plain `node`, as Yiem's compiled apps are.
 */
import type { TestProcess } from "@yiem/testing";
import { spawnCommand } from "../../../test/support/processes.js";

/** A restartable process of a peer: SIGKILL, then a fresh one with the same environment. */
export interface PeerProcess {
  current(): TestProcess;
  /** SIGKILLs the process and starts a replacement; resolves once it is ready. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `processes/<name>.ts` and waits for its `ready` line. */
async function startReady(name: string, env: Record<string, string>): Promise<TestProcess> {
  // BENCH_PEERS_CPU_PROF_DIR: `node --cpu-prof`, the profile written there when it stops.
  const profDir = process.env.BENCH_PEERS_CPU_PROF_DIR;
  const flags = profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const child = spawnCommand(["node", ...flags, `bench/peers/dist/processes/${name}.js`], env);
  await child
    .waitForLine((line) => line.trim() === "ready", 60_000)
    .catch(async (err) => {
      await child.stop(1000);
      throw new Error(
        `${name} did not start: ${String(err)}\n${child.lines.slice(-20).join("\n")}`,
      );
    });
  return child;
}

/** Starts a peer process that a supervisor restarts after a kill. */
export async function startPeerProcess(
  name: string,
  env: Record<string, string>,
): Promise<PeerProcess> {
  let current = await startReady(name, env);
  let replacing: Promise<void> = Promise.resolve();
  return {
    current: () => current,
    kill() {
      const old = current;
      old.signal("SIGKILL");
      replacing = old.exited.then(async () => {
        current = await startReady(name, env);
      });
      return replacing;
    },
    async stop() {
      await replacing.catch(() => undefined);
      await current.stop(3000);
    },
  };
}

/** The first of a system's tool processes (the one a worker kill test kills). */
export function firstOf(processes: PeerProcess[]): PeerProcess {
  const first = processes[0];
  if (!first) throw new Error("the system has no tool process to kill");
  return first;
}
