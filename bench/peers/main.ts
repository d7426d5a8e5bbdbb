/**
 * `npm run bench -- --peers`: Yiem against durable-execution peers on one workload
 * (`workload.ts`), systems alternating in rounds, then two kill tests per system (its orchestrator,
 * then one tool worker). Runs inside a
 * private network namespace with loopback only (see `bench/run.ts`), so Restate's server can
 * not phone home; PostgreSQL is reached over its Unix socket. Writes `bench/peers/results.json`.
 *
 * Options: `--rounds N` (5: a round's ratio varies by a third from one round to the next), `--seq N` runs one after another per block (20), `--load N` runs
 * per throughput block (128) at `--concurrency N` (64), `--kill-runs N` (100), `--kills N` (5),
 * `--kill-spacing MS` between the kill tests' runs (150), `--no-kill` (no orchestrator kill
 * test), `--no-worker-kill` (no tool-worker kill test), `--systems yiem,yiemEverysec,bullmq,restate,dbos`,
 * `--no-settle` (no wait for a quiet machine before each block).
 *
 * Before each measured block the machine is let go quiet (`waitForQuietMachine`: `sync`, then
 * idle cores and disks, at most 5 s): without it the system measured after PostgreSQL's load
 * block pays for PostgreSQL's writes on its own fsyncs.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedModelServer } from "@yiem/testing";
import { type PeersRecord, summarizePeers } from "../report/peersRecord.js";
import { waitForQuietMachine } from "../sampling/quietMachine.js";
import {
  type KillFigures,
  type KillTarget,
  killTest,
  type LoadFigures,
  measureLatency,
  measureLoad,
} from "./measure.js";
import { startBullmq } from "./systems/bullmq.js";
import { postgresAvailable, startDbos } from "./systems/dbos.js";
import type { PeerContext, PeerSystem } from "./systems/peerSystem.js";
import { startRestate } from "./systems/restate.js";
import { startYiem } from "./systems/yiem.js";
import { replyTo } from "./workload.js";

const RESULTS = fileURLToPath(new URL("./results.json", import.meta.url));

const STARTERS: Record<string, (ctx: PeerContext) => Promise<PeerSystem>> = {
  yiem: (ctx) => startYiem(ctx, "always"),
  yiemEverysec: (ctx) => startYiem(ctx, "everysec"),
  bullmq: startBullmq,
  restate: startRestate,
  dbos: startDbos,
};

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

function listOption(name: string, fallback: string[]): string[] {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : String(process.argv[at + 1]).split(",");
}

function log(text: string): void {
  console.log(`[peers ${new Date().toISOString().slice(11, 19)}] ${text}`);
}

/** Starts every asked system; one that cannot start is reported and left out. */
async function startSystems(ctx: PeerContext, names: string[]) {
  const started: Array<{ key: string; system: PeerSystem }> = [];
  const failed: Record<string, string> = {};
  for (const key of names) {
    const start = STARTERS[key];
    if (!start) throw new Error(`unknown system ${key}`);
    if (key === "dbos" && !postgresAvailable()) {
      failed[key] = "PostgreSQL does not answer on /var/run/postgresql";
      continue;
    }
    try {
      log(`starting ${key}`);
      started.push({ key, system: await start(ctx) });
    } catch (err) {
      failed[key] = String(err).slice(0, 500);
      log(`${key} did not start: ${failed[key]}`);
    }
  }
  return { started, failed };
}

/** The kill tests asked for: the orchestrator's unless `--no-kill`, a tool worker's unless `--no-worker-kill`. */
function killTargets(): KillTarget[] {
  return [
    ...(process.argv.includes("--no-kill") ? [] : ["orchestrator" as const]),
    ...(process.argv.includes("--no-worker-kill") ? [] : ["worker" as const]),
  ];
}

/** One kill test of `system`, killing `target`, with the options given on the command line. */
async function runKillTest(
  system: PeerSystem,
  tag: string,
  target: KillTarget,
  effectsFile: string,
): Promise<KillFigures> {
  log(`${target} kill test: ${system.name}`);
  const figures = await killTest(system, tag, {
    target,
    runs: option("kill-runs", 100),
    kills: option("kills", 5),
    spacingMs: option("kill-spacing", 150),
    giveUpMs: 180_000,
    effectsFile,
  });
  log(`${target} kill test ${system.name}: ${JSON.stringify(figures)}`);
  return figures;
}

/** Lets the machine go quiet before a measured block, unless `--no-settle`; logs a bound hit. */
async function settle(before: string): Promise<void> {
  if (process.argv.includes("--no-settle")) return;
  const { waitedMs, quiet } = await waitForQuietMachine();
  if (!quiet) log(`still busy ${Math.round(waitedMs)} ms before ${before}; measuring anyway`);
  else if (waitedMs > 1000) log(`quiet after ${Math.round(waitedMs)} ms before ${before}`);
}

async function main(): Promise<void> {
  const rounds = option("rounds", 5);
  const seq = option("seq", 20);
  const load = option("load", 128);
  const concurrency = option("concurrency", 64);
  const names = listOption("systems", Object.keys(STARTERS));
  const dataDir = await mkdtemp(join(tmpdir(), "yiem-bench-peers-"));
  const effectsFile = join(dataDir, "effects.log");
  await writeFile(effectsFile, "");
  const model = await startScriptedModelServer({ respond: replyTo });
  const ctx: PeerContext = { modelURL: model.baseURL, effectsFile, dataDir };
  const loadAtStart = loadavg()[0] ?? 0;
  const { started, failed } = await startSystems(ctx, names);
  const stop = async () => {
    for (const { system } of started) await system.close().catch(() => undefined);
    process.exit(1);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const latencies: Record<string, number[][]> = {};
  const loads: Record<string, LoadFigures[]> = {};
  const kills: Record<string, KillFigures> = {};
  const workerKills: Record<string, KillFigures> = {};
  const failedRuns: Record<string, number> = {};
  try {
    for (const { key, system } of started) {
      log(`warming up ${key}`);
      await measureLoad(system, `${key}-warm`, 20, 10);
    }
    for (let round = 0; round < rounds; round++) {
      const order = started.map((_, i) => started[(i + round) % started.length]!);
      for (const { key, system } of order) {
        log(`round ${round + 1}: ${key}`);
        await settle(`${key}'s runs one after another`);
        const latency = await measureLatency(system, `${key}-r${round}-seq`, seq);
        await settle(`${key}'s load block`);
        const loaded = await measureLoad(system, `${key}-r${round}-load`, load, concurrency);
        latencies[key] = [...(latencies[key] ?? []), latency.latencies];
        failedRuns[key] = (failedRuns[key] ?? 0) + latency.failed + loaded.failed;
        loads[key] = [...(loads[key] ?? []), loaded];
      }
    }
    for (const target of killTargets()) {
      for (const { key, system } of started) {
        if (key === "yiemEverysec") continue;
        await settle(`${key}'s ${target} kill test`);
        const figures = await runKillTest(system, `${key}-${target}-kill`, target, effectsFile);
        (target === "worker" ? workerKills : kills)[key] = figures;
      }
    }
  } finally {
    for (const { system } of started) await system.close().catch((err) => log(String(err)));
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  const record: PeersRecord = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "",
    loadAtStart,
    loadAtEnd: loadavg()[0] ?? 0,
    plan: { rounds, seq, load, concurrency },
    systems: Object.fromEntries(
      started.map(({ key, system }) => [
        key,
        {
          name: system.name,
          latencies: latencies[key] ?? [],
          loads: loads[key] ?? [],
          failedRuns: failedRuns[key] ?? 0,
          kill: kills[key],
          workerKill: workerKills[key],
        },
      ]),
    ),
    failed,
  };
  await writeFile(RESULTS, `${JSON.stringify(record, null, 2)}\n`);
  console.log(summarizePeers(record));
  log(`wrote ${RESULTS}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
