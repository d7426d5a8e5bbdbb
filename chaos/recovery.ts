import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FaultRecord } from "./faultDriver.js";
import type { SentInput } from "./workload.js";

/** Percentiles of one recovery measure, in seconds (`count` kills had something to measure). */
export interface RecoveryTimes {
  count: number;
  p50S: number;
  p99S: number;
  maxS: number;
}

/**
 * How fast the soak's kills were recovered from, on the timers it ran with (the production
 * defaults: 30 s lock, 30 s stalled check, 10 s lease), read from the processes' logs:
 * - `detectedS`: kill → a coordinator found the killed process's life dead;
 * - `coordinatorResumedS`: coordinator kill → the first of its sessions taken over by a live
 *   coordinator (the run resumed);
 * - `coordinatorAnsweredS`: coordinator kill → the first answer of an input of those sessions;
 * - `workerHandedOutS`: worker kill → its first call handed out again (to a live worker).
 */
export interface RecoveryFigures {
  detectedS: RecoveryTimes;
  coordinatorResumedS: RecoveryTimes;
  coordinatorAnsweredS: RecoveryTimes;
  workerHandedOutS: RecoveryTimes;
}

/** A pino line of a process log, as far as the measures read it. */
interface LogLine {
  time: number;
  msg: string;
  lifeId?: string;
  lives?: string[];
  holder?: string;
  sessionId?: string;
}

function readLines(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });
}

/** The nearest-rank percentile `p` (0–1) of `values`, in seconds with one decimal. */
function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return Math.round((sorted[index] ?? 0) / 100) / 10;
}

function timesOf(valuesMs: number[]): RecoveryTimes {
  const sorted = [...valuesMs].sort((a, b) => a - b);
  const max = Math.round((sorted.at(-1) ?? 0) / 100) / 10;
  return {
    count: sorted.length,
    p50S: percentile(sorted, 0.5),
    p99S: percentile(sorted, 0.99),
    maxS: max,
  };
}

/** The first time at or after `at` among `times`, as ms after `at`; undefined when none. */
function firstAfter(at: number, times: number[]): number | undefined {
  const after = times.filter((time) => time >= at);
  return after.length === 0 ? undefined : Math.min(...after) - at;
}

/** The life of the process that ran in the slot at `at` (its last start before then). */
function lifeAt(lines: LogLine[], at: number): string | undefined {
  const starts = lines.filter((l) => l.lifeId && l.time <= at && /started$/.test(l.msg));
  return starts.at(-1)?.lifeId;
}

/**
 * Measures each SIGKILL of the soak (`faults`) from the logs in `logDir` (`<slot>.log`) and
 * the answers the workload received (`sent`); see `RecoveryFigures`.
 */
export function measureRecovery(
  logDir: string,
  faults: FaultRecord[],
  sent: SentInput[],
  slots: string[],
): RecoveryFigures {
  const bySlot = new Map(slots.map((slot) => [slot, readLines(join(logDir, `${slot}.log`))]));
  const all = [...bySlot.values()].flat();
  const found = (life: string, msg: string) =>
    all.filter((l) => l.msg === msg && l.lives?.includes(life)).map((l) => l.time);
  const detected: number[] = [];
  const resumed: number[] = [];
  const answered: number[] = [];
  const handedOut: number[] = [];
  const push = (into: number[], value: number | undefined) => {
    if (value !== undefined) into.push(value);
  };
  for (const fault of faults) {
    if (fault.kind !== "coordinator SIGKILL" && fault.kind !== "worker SIGKILL") continue;
    const life = lifeAt(bySlot.get(fault.target) ?? [], fault.at);
    if (!life) continue;
    push(detected, firstAfter(fault.at, found(life, "processes found dead")));
    if (fault.kind === "worker SIGKILL") {
      push(handedOut, firstAfter(fault.at, found(life, "handed out the jobs of a dead process")));
      continue;
    }
    const takeovers = all.filter(
      (l) => l.msg === "took over a session whose holder is dead" && l.holder?.includes(life),
    );
    push(
      resumed,
      firstAfter(
        fault.at,
        takeovers.map((l) => l.time),
      ),
    );
    const sessions = new Set(takeovers.map((l) => l.sessionId));
    const answers = sent.filter((s) => sessions.has(s.sessionId) && s.answeredAt !== undefined);
    push(
      answered,
      firstAfter(
        fault.at,
        answers.map((s) => s.answeredAt as number),
      ),
    );
  }
  return {
    detectedS: timesOf(detected),
    coordinatorResumedS: timesOf(resumed),
    coordinatorAnsweredS: timesOf(answered),
    workerHandedOutS: timesOf(handedOut),
  };
}
