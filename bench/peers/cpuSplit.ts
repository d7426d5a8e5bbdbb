/**
 * Where a run's CPU goes, process by process: Yiem and BullMQ by hand on the peers workload
 * (`systems/*.ts`, one scripted model), blocks of `--load` runs with `--concurrency` in flight
 * alternating between them; prints each process's CPU per answered run (`/proc/<pid>/stat`,
 * user + system, every thread) and each system's total. What `npm run bench -- --peers`
 * reports as one figure per system, split.
 *
 * `--threads` splits each process into its main thread and its other threads (V8's compiler
 * and garbage-collector helpers, worker threads, libuv's pool). `--warm N`: N warm-up runs per
 * system (in blocks of `--load`, `--concurrency` in flight) instead of 40 with 8 in flight: a
 * process compiles its hot code (V8's optimizing compiler, on the other threads) for its first
 * few hundred runs, which the default warm-up leaves inside the measure.
 *
 * Usage: `npx tsx --conditions=yiem-source bench/peers/cpuSplit.ts [--blocks 6] [--load 64] [--concurrency 16] [--threads] [--warm N]`
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedModelServer } from "@yiem/testing";
import { readFlag } from "../sampling/portOwners.js";
import { processCpuMs, threadCpuMs } from "../sampling/processSampler.js";
import { measureLoad } from "./measure.js";
import { startBullmq } from "./systems/bullmq.js";
import type { PeerContext, PeerSystem } from "./systems/peerSystem.js";
import { startYiem } from "./systems/yiem.js";
import { replyTo } from "./workload.js";

const SPLIT_THREADS = process.argv.includes("--threads");

/**
 * CPU ms of each of `system`'s processes now, by its name (`pidNames`, else its pid); with
 * `--threads`, its main thread's and its other threads' apart.
 */
async function cpuByProcess(system: PeerSystem): Promise<Map<string, number>> {
  const pids = await system.pids();
  const names = system.pidNames ?? pids.map(String);
  const spent = new Map<string, number>();
  for (const [i, pid] of pids.entries()) {
    const name = names[i] ?? String(pid);
    const split = SPLIT_THREADS ? await threadCpuMs(pid) : undefined;
    if (split) {
      spent.set(`${name} main`, split.main);
      spent.set(`${name} others`, split.others);
    } else spent.set(name, (await processCpuMs(pid)) ?? 0);
  }
  return spent;
}

/** Adds `after - before`, process by process, into `sums`. */
function addSpent(
  sums: Map<string, number>,
  before: Map<string, number>,
  after: Map<string, number>,
) {
  for (const [name, ms] of after)
    sums.set(name, (sums.get(name) ?? 0) + ms - (before.get(name) ?? 0));
}

async function main(): Promise<void> {
  const blocks = Number(readFlag("blocks", "6"));
  const perBlock = Number(readFlag("load", "64"));
  const concurrency = Number(readFlag("concurrency", "16"));
  console.log(
    `load average at the start: ${loadavg()
      .map((v) => v.toFixed(2))
      .join(" ")}`,
  );
  const dataDir = await mkdtemp(join(tmpdir(), "yiem-cpu-split-"));
  const effectsFile = join(dataDir, "effects.log");
  await writeFile(effectsFile, "");
  const model = await startScriptedModelServer({ respond: replyTo });
  const ctx: PeerContext = { modelURL: model.baseURL, effectsFile, dataDir };
  const systems = { yiem: await startYiem(ctx, "always"), bullmq: await startBullmq(ctx) };
  const spent = { yiem: new Map<string, number>(), bullmq: new Map<string, number>() };
  const answered = { yiem: 0, bullmq: 0 };
  try {
    const warm = Number(readFlag("warm", "0"));
    for (const [name, system] of Object.entries(systems)) {
      if (!warm) await measureLoad(system, `${name}-warm`, 40, 8);
      for (let done = 0; done < warm; done += perBlock)
        await measureLoad(system, `${name}-warm-${done}`, perBlock, concurrency);
    }
    for (let i = 0; i < blocks; i++) {
      const order = i % 2 === 0 ? (["yiem", "bullmq"] as const) : (["bullmq", "yiem"] as const);
      for (const name of order) {
        const before = await cpuByProcess(systems[name]);
        const figures = await measureLoad(
          systems[name],
          `${name}-load-${i}`,
          perBlock,
          concurrency,
        );
        addSpent(spent[name], before, await cpuByProcess(systems[name]));
        answered[name] += perBlock - figures.failed;
      }
    }
    for (const name of ["yiem", "bullmq"] as const) {
      const rows = [...spent[name]].map(
        ([process, ms]) => `${process} ${(ms / answered[name]).toFixed(2)}`,
      );
      const total = [...spent[name].values()].reduce((sum, ms) => sum + ms, 0) / answered[name];
      console.log(`${name}: ${total.toFixed(2)} ms CPU per run (${rows.join(", ")})`);
    }
  } finally {
    for (const system of Object.values(systems)) await system.close();
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
