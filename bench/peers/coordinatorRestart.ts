/**
 * How long a SIGKILLed compiled coordinator's replacement takes to answer, in parts (issue 31):
 * the Yiem system of `npm run bench -- --peers` (a private `redis-server` with AOF fsynced
 * always, the scripted model, two compiled workers with the `step` tool, one compiled
 * coordinator), warmed by `--warm` runs, then runs arriving every `--spacing` ms. Each of
 * `--kills` times (1.5 s apart) the coordinator is SIGKILLed, a run is queued, and a
 * replacement is spawned at once; this records (a) spawn → its `coordinator ready` line (the
 * line's own time), (b) ready → its first `run finished` line, (c) spawn → the answer of the run
 * queued at the kill, kill → the first answer of any run (what the peers bench's kill test
 * measures), the replacement's first run's `durationMs`, and its CPU time (all its threads,
 * from `/proc/<pid>/stat`) when its ready line and its first run's line came. Prints each kill
 * and the medians.
 *
 * Usage: `npx tsx --conditions=yiem-source bench/peers/coordinatorRestart.ts [--kills 9]
 * [--spacing 150] [--warm 20] [--variants a=fileA,b=fileB] [--cpu-prof DIR]` after
 * `npm run build`. `--variants`: the replacements take turns between entry files, each copied
 * over `apps/coordinator/dist/main.bundle.js` before its turn (copies of entries, never that
 * file itself: the built one is put back at the end), for an A/B under the same load, with
 * medians per variant. `--cpu-prof DIR`: each replacement runs with `node --cpu-prof` and is
 * stopped with SIGTERM after its first run (so its profile is written to DIR). It prints
 * figures; it asserts nothing.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ClusterProcesses,
  logMessage,
  type ProcessSlot,
  startClusterProcesses,
  startScriptedModelServer,
  startTestRedis,
} from "@yiem/testing";
import { openPlainCoordinatorQueue } from "../../test/support/openPlainCoordinatorQueue.js";
import { processCpuMs } from "../sampling/processSampler.js";
import { startJobWaiter } from "./systems/jobWaiter.js";
import { sleep } from "./systems/peerSystem.js";
import { replyTo, STEP_TOOL } from "./workload.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TOOLS_DIR = fileURLToPath(new URL("./yiemTools/", import.meta.url));

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

function stringOption(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
}

/** What one kill gave (ms). */
interface KillFigures {
  spawnToReady: number;
  readyToFirstRun: number;
  spawnToQueuedAnswer: number;
  killToAnyAnswer: number;
  cpuAtReady: number;
  cpuAtFirstRun: number;
  firstRunMs: number;
}

/** The `time` (epoch ms) and `durationMs` of a pino line. */
function timesOf(line: string): { time: number; durationMs?: number } {
  return JSON.parse(line) as { time: number; durationMs?: number };
}

/** An entry file the replacements take turns with (`--variants name=file,…`). */
interface Variant {
  name: string;
  file?: string;
}

const ENTRY = join(ROOT, "apps/coordinator/dist/main.bundle.js");

/** `--variants a=fileA,b=fileB`: each copied over the coordinator's entry before its turn. */
function readVariants(): Variant[] {
  const given = stringOption("variants");
  if (!given) return [{ name: "as built" }];
  return given.split(",").map((pair) => {
    const [name = "", file] = pair.split("=");
    return { name, file };
  });
}

/** The median of `values`. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Starts the system; `coordinatorFlags` go to the coordinator's `node`. */
async function startSystem(coordinatorFlags: string[]) {
  const dataDir = await mkdtemp(join(tmpdir(), "yiem-restart-"));
  const effectsFile = join(dataDir, "effects.log");
  await writeFile(effectsFile, "");
  const model = await startScriptedModelServer({ respond: replyTo });
  const redis = await startTestRedis({
    privateServer: true,
    appendOnly: true,
    appendFsync: "always",
  });
  const env = {
    REDIS_URL: redis.url,
    YIEM_PREFIX: redis.prefix,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "sk-bench-peers",
    YIEM_MODEL: "scripted-model",
    YIEM_TOOLS_DIR: TOOLS_DIR,
    BENCH_PEERS_EFFECTS: effectsFile,
    LOG_LEVEL: "info",
  };
  const processes: ClusterProcesses = await startClusterProcesses({
    cwd: ROOT,
    launch: "compiled",
    env,
    coordinators: 0,
    workers: 2,
    readyTimeoutMs: 90_000,
    expectTools: [STEP_TOOL],
  });
  const coordinator = await processes.add("coordinator", { nodeFlags: coordinatorFlags });
  const {
    queue,
    events,
    close: closeClient,
  } = await openPlainCoordinatorQueue(redis.url, redis.prefix);
  const waiter = startJobWaiter(events);
  const run = async (key: string) => {
    const done = waiter.waitFor(key);
    await queue.add("session", { input: key }, { jobId: key });
    return done;
  };
  const close = async () => {
    waiter.stop();
    await processes.close(5000);
    await closeClient();
    await redis.stop();
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  return { coordinator, run, close };
}

/** Runs one kill: SIGKILL, a run queued, the replacement spawned; what followed. */
async function killOnce(
  coordinator: ProcessSlot,
  run: (key: string) => Promise<unknown>,
  tag: string,
  answers: { next: () => Promise<number>; onAnswer: () => void },
  graceful: boolean,
): Promise<KillFigures> {
  const { next: anyAnswer, onAnswer } = answers;
  if (coordinator.isAlive()) coordinator.signal("SIGKILL");
  await coordinator.exited();
  const killedAt = Date.now();
  const firstAny = anyAnswer();
  const queued = run(`${tag}-at-kill`).then(() => {
    onAnswer();
    return Date.now();
  });
  const spawnedAt = Date.now();
  await coordinator.restart();
  const proc = coordinator.current();
  const cpuAtReady = (await processCpuMs(proc.pid)) ?? Number.NaN;
  const readyLine = await proc.waitForLine(logMessage("coordinator ready"));
  const finishedLine = await proc.waitForLine(logMessage("run finished"), 60_000);
  const cpuAtFirstRun = (await processCpuMs(proc.pid)) ?? Number.NaN;
  const answeredAt = await queued;
  const anyAt = await firstAny;
  const ready = timesOf(readyLine).time;
  const finished = timesOf(finishedLine);
  if (graceful) {
    await sleep(200);
    await coordinator.stop(10_000); // SIGTERM: --cpu-prof writes its profile
  }
  return {
    spawnToReady: ready - spawnedAt,
    readyToFirstRun: finished.time - ready,
    spawnToQueuedAnswer: answeredAt - spawnedAt,
    killToAnyAnswer: anyAt - killedAt,
    cpuAtReady,
    cpuAtFirstRun,
    firstRunMs: finished.durationMs ?? Number.NaN,
  };
}

async function main(): Promise<void> {
  const kills = option("kills", 9);
  const spacing = option("spacing", 150);
  const warm = option("warm", 20);
  const profDir = stringOption("cpu-prof");
  const flags = profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const variants = readVariants();
  const asBuilt = await readFile(ENTRY);
  if (variants[0]?.file) await copyFile(variants[0].file, ENTRY);
  const loadAtStart = loadavg()[0] ?? 0;
  const system = await startSystem(flags);
  let answers: Array<(at: number) => void> = [];
  const anyAnswer = () => new Promise<number>((resolve) => answers.push(resolve));
  const onAnswer = () => {
    const at = Date.now();
    for (const resolve of answers) resolve(at);
    answers = [];
  };
  try {
    for (let i = 0; i < warm; i++) await system.run(`warm-${i}`);
    let streaming = true;
    let n = 0;
    const stream = (async () => {
      while (streaming) {
        system.run(`stream-${n++}`).then(onAnswer, () => undefined);
        await sleep(spacing);
      }
    })();
    const figures: Array<KillFigures & { variant: string }> = [];
    for (let k = 0; k < kills * variants.length; k++) {
      const variant = variants[k % variants.length] as Variant;
      if (variant.file) await copyFile(variant.file, ENTRY);
      await sleep(1500);
      const answers = { next: anyAnswer, onAnswer };
      const f = await killOnce(system.coordinator, system.run, `kill-${k}`, answers, !!profDir);
      figures.push({ ...f, variant: variant.name });
      console.log(`kill ${k} (${variant.name}): ${JSON.stringify(f)}`);
    }
    streaming = false;
    await stream;
    console.log(`load ${loadAtStart.toFixed(2)} → ${(loadavg()[0] ?? 0).toFixed(2)}`);
    for (const { name } of variants) {
      const own = figures.filter((f) => f.variant === name);
      const keys = Object.keys(own[0] ?? {}).filter((k) => k !== "variant") as Array<
        keyof KillFigures
      >;
      const medians = Object.fromEntries(
        keys.map((key) => [key, Math.round(median(own.map((f) => f[key])))]),
      );
      console.log(`${name}: medians of ${own.length}: ${JSON.stringify(medians)}`);
    }
  } finally {
    await system.close();
    await writeFile(ENTRY, asBuilt);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
