/**
 * The record of `npm run bench -- --peers` (`bench/peers/results.json`) and its summary: each
 * system's latency, runs/s and CPU per run, with ratios against Yiem (fsync always) paired
 * within rounds, and its kill test.
 */
import { percentile } from "../sampling/stats.js";

/** One throughput block's figures. */
export interface PeerLoad {
  runsPerS: number;
  cpuMsPerRun: number;
  /** Runs of the block that failed (counted out of its runs/s and CPU per run). */
  failed?: number;
}

/** One kill test's figures. */
export interface PeerKill {
  runs: number;
  kills: number;
  answered: number;
  lost: number;
  toolsTwice: number;
  /** Seconds from each kill to the first answer after it, of any run. */
  recoveryS: number[];
  /** Seconds from each kill until every run in flight at the kill was answered. */
  drainedS?: number[];
}

/** What was measured of one system: per round, its latencies (ms) and its throughput block. */
export interface PeerFigures {
  name: string;
  latencies: number[][];
  loads: PeerLoad[];
  /** Runs of the rounds (both blocks) that failed: an error or a wrong answer. */
  failedRuns?: number;
  /** The orchestrator kill test. */
  kill?: PeerKill;
  /** The tool-worker kill test (absent in records from before it, or with `--no-worker-kill`). */
  workerKill?: PeerKill;
}

/** The whole record of one peers run. */
export interface PeersRecord {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  loadAtStart: number;
  loadAtEnd: number;
  plan: { rounds: number; seq: number; load: number; concurrency: number };
  /** By key: `yiem` (fsync always, the baseline), `yiemEverysec`, `bullmq`, `restate`, `dbos`. */
  systems: Record<string, PeerFigures>;
  /** Systems that could not be started, and why. */
  failed: Record<string, string>;
}

/** The key of the baseline every ratio is taken against. */
export const PEERS_BASELINE = "yiem";

/** One system's summary row. */
export interface PeerRow {
  key: string;
  name: string;
  p50: number;
  p99: number;
  runsPerS: number;
  cpuMsPerRun: number;
  /** Against the baseline, the median over rounds of each round's ratio (`NaN` without one). */
  ratio: { p50: number; runsPerS: number; cpuMsPerRun: number };
  kill?: PeerKill;
  workerKill?: PeerKill;
}

function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

function median(values: number[]): number {
  return percentile(sorted(values), 50);
}

/** The median over rounds of `of(system, r) / of(baseline, r)`. */
function pairedRatio(
  system: PeerFigures,
  baseline: PeerFigures | undefined,
  of: (f: PeerFigures, round: number) => number,
): number {
  if (!baseline) return Number.NaN;
  const ratios = system.loads.map((_, r) => of(system, r) / of(baseline, r));
  return median(ratios.filter(Number.isFinite));
}

const roundP50 = (f: PeerFigures, r: number) => median(f.latencies[r] ?? []);
const roundRunsPerS = (f: PeerFigures, r: number) => f.loads[r]?.runsPerS ?? Number.NaN;
const roundCpu = (f: PeerFigures, r: number) => f.loads[r]?.cpuMsPerRun ?? Number.NaN;

/** The summary rows, the baseline first. */
export function peerRows(record: PeersRecord): PeerRow[] {
  const baseline = record.systems[PEERS_BASELINE];
  return Object.entries(record.systems).map(([key, f]) => {
    const all = sorted(f.latencies.flat());
    return {
      key,
      name: f.name,
      p50: percentile(all, 50),
      p99: percentile(all, 99),
      runsPerS: median(f.loads.map((l) => l.runsPerS)),
      cpuMsPerRun: median(f.loads.map((l) => l.cpuMsPerRun)),
      ratio: {
        p50: pairedRatio(f, baseline, roundP50),
        runsPerS: pairedRatio(f, baseline, roundRunsPerS),
        cpuMsPerRun: pairedRatio(f, baseline, roundCpu),
      },
      ...(f.kill ? { kill: f.kill } : {}),
      ...(f.workerKill ? { workerKill: f.workerKill } : {}),
    };
  });
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "–";
}

/** p50 and max of `values` (seconds) as "1.2 / 3.4". */
function p50AndMax(values: number[] | undefined): string {
  const s = sorted(values ?? []);
  return `${fixed(percentile(s, 50), 1)} / ${fixed(s.at(-1) ?? Number.NaN, 1)}`;
}

/** A kill test as cells: answered / lost / tools twice; to the first answer; until drained (s). */
export function killCells(kill: PeerKill | undefined): [string, string, string] {
  if (!kill) return ["not run", "–", "–"];
  return [
    `${kill.answered} / ${kill.lost} / ${kill.toolsTwice} (${kill.kills} kills, ${kill.runs} runs)`,
    p50AndMax(kill.recoveryS),
    p50AndMax(kill.drainedS),
  ];
}

/** The summary as the terminal prints it. */
export function summarizePeers(record: PeersRecord): string {
  const lines = peerRows(record).map(
    (row) =>
      `${row.name.padEnd(28)} p50 ${fixed(row.p50, 1)} ms (${fixed(row.ratio.p50, 2)}×)  p99 ${fixed(row.p99, 1)} ms  ` +
      `${fixed(row.runsPerS, 1)} runs/s (${fixed(row.ratio.runsPerS, 2)}×)  CPU ${fixed(row.cpuMsPerRun, 1)} ms/run (${fixed(row.ratio.cpuMsPerRun, 2)}×)\n` +
      `${"".padEnd(28)} orchestrator kill: ${killCells(row.kill).join("; ")}\n` +
      `${"".padEnd(28)} worker kill: ${killCells(row.workerKill).join("; ")}`,
  );
  const failed = Object.entries(record.failed).map(([key, why]) => `${key}: not run (${why})`);
  return [...lines, ...failed].join("\n");
}
