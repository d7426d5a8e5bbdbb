/**
 * Yiem as deployed: a private `redis-server` with AOF (`appendfsync` as asked), one compiled
 * coordinator and two compiled tool workers on their defaults, the `step` tool from
 * `yiemTools/`. Runs arrive as the client sends them: a job on the coordinator queue.
 */
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { type ProcessSlot, startClusterProcesses, startTestRedis } from "@yiem/testing";
import { openPlainCoordinatorQueue } from "../../../test/support/openPlainCoordinatorQueue.js";
import { repoRoot } from "../../../test/support/processes.js";
import { readRedisPid } from "../../sampling/processSampler.js";
import { STEP_TOOL } from "../workload.js";
import { startJobWaiter } from "./jobWaiter.js";
import type { PeerContext, PeerSystem } from "./peerSystem.js";

const TOOLS_DIR = fileURLToPath(new URL("../yiemTools/", import.meta.url));

/** The final text of a coordinator job's return value. */
function answerOf(returnvalue: unknown): string {
  const response = (returnvalue as { response?: { content?: Array<{ text?: string }> } })?.response;
  return response?.content?.[0]?.text ?? "";
}

/** SIGKILLs the process in `slot` and starts a replacement; resolves once it is ready. */
async function killAndRestart(slot: ProcessSlot | undefined, what: string): Promise<void> {
  if (!slot) throw new Error(`Yiem bench: no ${what} to kill`);
  slot.signal("SIGKILL");
  await slot.exited();
  await slot.restart();
}

/**
 * Starts Yiem with Redis fsyncing its AOF as `fsync` says; its processes from the checkout at
 * `root` (built; this one by default: `pairedRuns.ts` compares two).
 */
export async function startYiem(
  ctx: PeerContext,
  fsync: "always" | "everysec",
  root: string = repoRoot,
): Promise<PeerSystem> {
  const logDir = process.env.BENCH_PEERS_LOG_DIR;
  // A log folder not made yet would fail the start after Redis is up (and leave it running).
  if (logDir) await mkdir(logDir, { recursive: true });
  const redis = await startTestRedis({ privateServer: true, appendOnly: true, appendFsync: fsync });
  const env = {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: ctx.modelURL,
    OPENAI_API_KEY: "sk-bench-peers",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: TOOLS_DIR,
    BENCH_PEERS_EFFECTS: ctx.effectsFile,
    LOG_LEVEL: process.env.BENCH_PEERS_YIEM_LOG_LEVEL ?? "info",
  };
  // BENCH_PEERS_CPU_PROF_DIR: every Yiem process runs with `node --cpu-prof` and writes its
  // profile there when it stops (`criticalPath.ts --cpu-prof`), a sample every
  // BENCH_PEERS_CPU_PROF_INTERVAL µs if set.
  const profDir = process.env.BENCH_PEERS_CPU_PROF_DIR;
  // BENCH_PEERS_NODE_FLAGS: more `node` flags for every Yiem process (e.g. `--trace-gc`, which
  // NODE_OPTIONS refuses), started as with a profile.
  const extraFlags = (process.env.BENCH_PEERS_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const flagged = Boolean(profDir) || extraFlags.length > 0;
  const processes = await startClusterProcesses({
    cwd: root,
    launch: "compiled",
    env,
    coordinators: flagged ? 0 : 1,
    workers: flagged ? 0 : 2,
    readyTimeoutMs: 90_000,
    expectTools: [STEP_TOOL],
    // BENCH_PEERS_LOG_DIR keeps one log file per Yiem process there (to read after a run).
    ...(logDir ? { logDir } : {}),
  }).catch(async (err: unknown) => {
    await redis.stop();
    throw err;
  });
  if (flagged) {
    const interval = process.env.BENCH_PEERS_CPU_PROF_INTERVAL; // µs between samples
    const nodeFlags = profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
    if (profDir && interval) nodeFlags.push(`--cpu-prof-interval=${interval}`);
    nodeFlags.push(...extraFlags);
    await processes.add("worker", { nodeFlags });
    await processes.add("worker", { nodeFlags });
    await processes.add("coordinator", { nodeFlags });
  }
  const {
    connection,
    queue,
    events,
    close: closeClient,
  } = await openPlainCoordinatorQueue(redis.url, redis.prefix);
  const waiter = startJobWaiter(events);
  const redisPid = await readRedisPid(connection);
  const slots = () => [...processes.coordinators, ...processes.workers];
  return {
    name: `Yiem (appendfsync ${fsync})`,
    redisUrl: redis.url,
    pidNames: ["redis", "coordinator", ...processes.workers.map((_, i) => `worker ${i + 1}`)],
    async run(run) {
      const done = waiter.waitFor(run);
      await queue.add("session", { input: run }, { jobId: run });
      return answerOf(await done);
    },
    pids: async () => [redisPid, ...slots().map((slot) => slot.current().pid)],
    killOrchestrator: () => killAndRestart(processes.coordinators[0], "coordinator"),
    killToolWorker: () => killAndRestart(processes.workers[0], "tool worker"),
    async close() {
      waiter.stop();
      await processes.close(5000);
      await closeClient();
      await redis.stop();
    },
  };
}
