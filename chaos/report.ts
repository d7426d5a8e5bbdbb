import { writeFile } from "node:fs/promises";
import { type FaultKind, KILL_FAULTS } from "./faultDriver.js";
import type { RecoveryFigures, RecoveryTimes } from "./recovery.js";
import type { SoakResult } from "./soak.js";

/** The figures of one soak, as `npm run chaos` writes them for docs/RELIABILITY.md. */
export interface ChaosFigures {
  recordedAt: string;
  seed: number;
  cluster: boolean;
  /** The command line that reproduces the soak. */
  command: string;
  durationS: number;
  sessions: number;
  /** Request jobs (inputs) in the coordinator queue at the end. */
  runs: number;
  answered: number;
  duplicates: number;
  violations: number;
  kills: number;
  /** Faults by kind (kills and stops). */
  faults: Partial<Record<FaultKind, number>>;
  aborts: number;
  approvals: { approved: number; denied: number };
  calls: number;
  executions: number;
  /**
   * Calls of the child agent, and how many got its answer or were aborted with their tree
   * (absent in soaks from before child runs).
   */
  childCalls?: { calls: number; answered: number; aborted: number };
  /** Calls that ran more than once where the docs allow it. */
  atLeastOnceReruns: number;
  /**
   * How fast its kills were recovered from, on the timers the soak ran with (absent in soaks
   * from before the failure detector, which ran on short timers).
   */
  recovery?: RecoveryFigures;
  /** The lock, stalled check and lease the soak ran with (`production` or `short`). */
  timers?: string;
}

/** The figures of a soak. */
export function figuresOf(result: SoakResult, command: string): ChaosFigures {
  const faults: Partial<Record<FaultKind, number>> = {};
  for (const fault of result.faults) faults[fault.kind] = (faults[fault.kind] ?? 0) + 1;
  const decisions = [...result.approver.decisions.values()];
  return {
    recordedAt: new Date().toISOString(),
    seed: result.options.seed,
    cluster: result.options.cluster,
    command,
    durationS: Math.round(result.durationMs / 1000),
    sessions: result.workload.sessions,
    runs: result.check.requests.jobs,
    answered: result.check.requests.answered,
    duplicates: result.check.requests.duplicates + result.check.sideEffects.duplicated,
    violations: result.check.violations.length,
    kills: result.faults.filter((f) => KILL_FAULTS.includes(f.kind)).length,
    faults,
    aborts: result.workload.aborts,
    approvals: {
      approved: decisions.filter((d) => d === "approved").length,
      denied: decisions.filter((d) => d === "denied").length,
    },
    calls: result.check.sideEffects.calls,
    executions: result.check.sideEffects.executions,
    childCalls: {
      calls: result.check.trees.childCalls,
      answered: result.check.trees.answered,
      aborted: result.check.trees.aborted,
    },
    atLeastOnceReruns: result.check.sideEffects.atLeastOnceReruns,
    recovery: result.recovery,
    timers: "production (30 s lock, 30 s stalled check, 10 s lease)",
  };
}

/** `p50 / p99 / max s (n kills)`, or "–" when no kill had anything to measure. */
export function formatTimes(times: RecoveryTimes | undefined): string {
  if (!times || times.count === 0) return "–";
  return `${times.p50S} / ${times.p99S} / ${times.maxS} s (${times.count})`;
}

function table(rows: Array<[string, string | number]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join("\n");
}

/** The soak's report for a terminal: the figures table, then each violation and note. */
export function formatReport(result: SoakResult, figures: ChaosFigures): string {
  const faultRows = Object.entries(figures.faults).map(
    ([kind, n]) => [`  ${kind}`, n] as [string, number],
  );
  const notes = result.check.findings.filter((f) => f.severity === "note");
  const lines = [
    `chaos soak, seed ${figures.seed}${figures.cluster ? " (Redis Cluster)" : ""}: ${figures.durationS} s`,
    table([
      ["runs (request jobs)", figures.runs],
      ["sessions", figures.sessions],
      ["kills", figures.kills],
      ...faultRows,
      ["aborts sent", figures.aborts],
      ["approved / denied", `${figures.approvals.approved} / ${figures.approvals.denied}`],
      ["answered", figures.answered],
      ["tool calls / executions", `${figures.calls} / ${figures.executions}`],
      [
        "child runs / answered / aborted",
        `${figures.childCalls?.calls ?? 0} / ${figures.childCalls?.answered ?? 0} / ${figures.childCalls?.aborted ?? 0}`,
      ],
      ["reruns allowed by the docs", figures.atLeastOnceReruns],
      ["duplicates", figures.duplicates],
      ["violations", figures.violations],
      ["recovery, p50 / p99 / max (kills measured):", ""],
      ["  kill → found dead", formatTimes(figures.recovery?.detectedS)],
      ["  coordinator kill → run resumed", formatTimes(figures.recovery?.coordinatorResumedS)],
      ["  coordinator kill → first answer", formatTimes(figures.recovery?.coordinatorAnsweredS)],
      ["  worker kill → call handed out", formatTimes(figures.recovery?.workerHandedOutS)],
    ]),
  ];
  for (const v of result.check.violations)
    lines.push(`VIOLATION [${v.check}] ${v.subject}: ${v.detail}`);
  if (notes.length > 0)
    lines.push(
      `${notes.length} notes, e.g.:`,
      ...notes.slice(0, 10).map((n) => `  [${n.check}] ${n.subject}: ${n.detail}`),
    );
  lines.push(`reproduce: ${figures.command}`, `logs and ledger: ${result.runDir}`);
  return lines.join("\n");
}

/** Writes the figures file that `scripts/reliabilityReport.ts` reads. */
export async function writeFigures(path: string, figures: ChaosFigures): Promise<void> {
  await writeFile(path, `${JSON.stringify(figures, null, 2)}\n`);
}
