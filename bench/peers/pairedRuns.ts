/**
 * An A/B of Yiem on the peers workload, paired run by run: two Yiem systems as
 * `systems/yiem.ts` starts them (each its own Redis with `appendfsync always`, coordinator and
 * two tool workers), one from this checkout (`a`) and one from another (`--b DIR`, built with
 * `npm run build`), against one scripted model. Runs alternate a, b, a, b… one at a time
 * (latency: each system's p50 and the median of the b ÷ a ratios of neighbouring runs), then
 * blocks of `--load` runs with `--concurrency` in flight alternate (CPU per run of every
 * process of each system, Redis included, and runs/s). Alternating keeps the drift of a shared
 * machine out of the ratio; the load average is printed at the start and the end.
 *
 * Usage: `npx tsx --conditions=yiem-source bench/peers/pairedRuns.ts --b ../other-checkout
 * [--runs 200] [--blocks 6] [--load 64] [--concurrency 16]`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startScriptedModelServer } from "@yiem/testing";
import { readFlag } from "../sampling/portOwners.js";
import { processCpuMs } from "../sampling/processSampler.js";
import { measureLatency, measureLoad } from "./measure.js";
import type { PeerContext, PeerSystem } from "./systems/peerSystem.js";
import { startYiem } from "./systems/yiem.js";
import { replyTo } from "./workload.js";

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
}

/** CPU ms of every process of `system` now, summed. */
async function cpuNow(system: PeerSystem): Promise<number> {
  const values = await Promise.all((await system.pids()).map((pid) => processCpuMs(pid)));
  return values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");

async function main(): Promise<void> {
  const other = readFlag("b", "");
  if (!other) throw new Error("--b DIR: the other checkout (built) is required");
  const runs = Number(readFlag("runs", "200"));
  const blocks = Number(readFlag("blocks", "6"));
  const perBlock = Number(readFlag("load", "64"));
  const concurrency = Number(readFlag("concurrency", "16"));
  console.log(`load average at the start: ${load()}`);
  const dataDir = await mkdtemp(join(tmpdir(), "yiem-paired-"));
  const effectsFile = join(dataDir, "effects.log");
  await writeFile(effectsFile, "");
  const model = await startScriptedModelServer({ respond: replyTo });
  const ctx: PeerContext = { modelURL: model.baseURL, effectsFile, dataDir };
  const a = await startYiem(ctx, "always");
  const b = await startYiem(ctx, "always", resolve(other));
  const systems = { a, b };
  try {
    for (const [name, system] of Object.entries(systems))
      await measureLoad(system, `${name}-warm`, 40, 8);
    const latencies: Record<"a" | "b", number[]> = { a: [], b: [] };
    const ratios: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Which goes first alternates too: neither always follows the other.
      const order = i % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const);
      const pair: Partial<Record<"a" | "b", number>> = {};
      for (const name of order) {
        const {
          latencies: [ms],
        } = await measureLatency(systems[name], `${name}-seq-${i}`, 1);
        if (ms !== undefined) latencies[name].push(ms);
        pair[name] = ms;
      }
      if (pair.a !== undefined && pair.b !== undefined) ratios.push(pair.b / pair.a);
    }
    const cpu = { a: 0, b: 0 };
    const answered = { a: 0, b: 0 };
    const wall = { a: 0, b: 0 };
    for (let i = 0; i < blocks; i++) {
      const order = i % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const);
      for (const name of order) {
        const system = systems[name];
        const before = await cpuNow(system);
        const started = performance.now();
        const figures = await measureLoad(system, `${name}-load-${i}`, perBlock, concurrency);
        wall[name] += performance.now() - started;
        cpu[name] += (await cpuNow(system)) - before;
        answered[name] += perBlock - figures.failed;
      }
    }
    for (const name of ["a", "b"] as const) {
      const l = latencies[name];
      console.log(
        `${name}: latency p50 ${quantile(l, 0.5).toFixed(2)} ms, p90 ${quantile(l, 0.9).toFixed(2)} ms (${l.length} runs); ` +
          `CPU ${(cpu[name] / answered[name]).toFixed(2)} ms per run, ${((answered[name] * 1000) / wall[name]).toFixed(1)} runs/s at ${concurrency} in flight`,
      );
    }
    // The geometric mean of the pairs' ratios, with a 95 % interval (normal, on the logs).
    const logs = ratios.map((ratio) => Math.log(ratio));
    const mean = logs.reduce((sum, value) => sum + value, 0) / logs.length;
    const sd = Math.sqrt(
      logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (logs.length - 1),
    );
    const half = (1.96 * sd) / Math.sqrt(logs.length);
    console.log(
      `b ÷ a, paired: latency median ${quantile(ratios, 0.5).toFixed(3)}, geometric mean ${Math.exp(mean).toFixed(3)} ` +
        `(95 % ${Math.exp(mean - half).toFixed(3)}–${Math.exp(mean + half).toFixed(3)}) of runs next to each other; ` +
        `CPU per run ${(cpu.b / answered.b / (cpu.a / answered.a)).toFixed(3)}`,
    );
    console.log(`load average at the end: ${load()}`);
  } finally {
    await a.close();
    await b.close();
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
