/**
 * Where a run's CPU goes, process by process: Yiem and BullMQ by hand on the peers workload
 * (`systems/*.ts`, one scripted model), blocks of `--load` runs with `--concurrency` in flight
 * alternating between them; prints each process's CPU per answered run (`/proc/<pid>/stat`,
 * user + system, every thread) and each system's total. What `npm run bench -- --peers`
 * reports as one figure per system, split.
 *
 * Usage: `npx tsx --conditions=yiem-source bench/peers/cpuSplit.ts [--blocks 6] [--load 64] [--concurrency 16]`
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedModelServer } from "@yiem/testing";
import { readFlag } from "../sampling/portOwners.js";
import { processCpuMs } from "../sampling/processSampler.js";
import { measureLoad } from "./measure.js";
import { startBullmq } from "./systems/bullmq.js";
import type { PeerContext, PeerSystem } from "./systems/peerSystem.js";
import { startYiem } from "./systems/yiem.js";
import { replyTo } from "./workload.js";

/** CPU ms of each of `system`'s processes now, by its name (`pidNames`, else its pid). */
async function cpuByProcess(system: PeerSystem): Promise<Map<string, number>> {
  const pids = await system.pids();
  const names = system.pidNames ?? pids.map(String);
  const values = await Promise.all(pids.map((pid) => processCpuMs(pid)));
  return new Map(pids.map((_, i) => [names[i] ?? String(pids[i]), values[i] ?? 0]));
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
    for (const [name, system] of Object.entries(systems))
      await measureLoad(system, `${name}-warm`, 40, 8);
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
