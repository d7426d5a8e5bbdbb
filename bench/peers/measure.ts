/**
 * How the peers are measured: runs one after another (latency), runs `concurrency` at a time
 * (runs/s and CPU per run of every process of the system), and the kill test.
 */
import { readFile } from "node:fs/promises";
import { createRandom } from "../../chaos/random.js";
import { processCpuMs } from "../sampling/processSampler.js";
import type { PeerSystem } from "./systems/peerSystem.js";
import { sleep } from "./systems/peerSystem.js";
import { FINAL_ANSWER } from "./workload.js";

/** Runs one run and returns its latency (ms); throws on a wrong answer. */
async function timedRun(system: PeerSystem, run: string): Promise<number> {
  const started = performance.now();
  const answer = await system.run(run);
  if (answer !== FINAL_ANSWER) throw new Error(`${system.name}: run ${run} answered ${answer}`);
  return performance.now() - started;
}

/** Runs one run; its latency (ms), or `undefined` (logged) when it failed. */
async function triedRun(system: PeerSystem, run: string): Promise<number | undefined> {
  try {
    return await timedRun(system, run);
  } catch (err) {
    console.error(`[peers] ${system.name}: run ${run} failed: ${String(err).slice(0, 300)}`);
    return undefined;
  }
}

/** The latencies (ms) of `count` runs one after another, and how many failed. */
export async function measureLatency(
  system: PeerSystem,
  tag: string,
  count: number,
): Promise<{ latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const ms = await triedRun(system, `${tag}-${i}`);
    if (ms !== undefined) latencies.push(ms);
  }
  return { latencies, failed: count - latencies.length };
}

/** Runs `keys` with at most `concurrency` in flight. */
async function runPool(
  keys: string[],
  concurrency: number,
  start: (key: string) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < keys.length) {
      const key = keys[next++] as string;
      await start(key);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, lane));
}

/** CPU time (ms) of each pid now. */
async function cpuOf(pids: number[]): Promise<Map<number, number>> {
  const values = await Promise.all(
    pids.map(async (pid) => [pid, (await processCpuMs(pid)) ?? 0] as const),
  );
  return new Map(values);
}

/** What one throughput block gave. */
export interface LoadFigures {
  runsPerS: number;
  cpuMsPerRun: number;
  /** Runs that failed (no answer, or an error); counted out of runs/s and CPU per run. */
  failed: number;
}

/** `count` runs, `concurrency` at a time: runs/s and CPU per run of every process of the system. */
export async function measureLoad(
  system: PeerSystem,
  tag: string,
  count: number,
  concurrency: number,
): Promise<LoadFigures> {
  const before = await cpuOf(await system.pids());
  const started = performance.now();
  const keys = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
  let answered = 0;
  await runPool(keys, concurrency, async (key) => {
    if ((await triedRun(system, key)) !== undefined) answered++;
  });
  const wallMs = performance.now() - started;
  const after = await cpuOf(await system.pids());
  let cpu = 0;
  for (const [pid, value] of after) cpu += value - (before.get(pid) ?? 0);
  return {
    runsPerS: (answered * 1000) / wallMs,
    cpuMsPerRun: cpu / Math.max(1, answered),
    failed: count - answered,
  };
}

/** What the kill test gave. */
export interface KillFigures {
  runs: number;
  kills: number;
  answered: number;
  lost: number;
  /** Tool calls (run and label) whose side effect was written more than once. */
  toolsTwice: number;
  /** Seconds from each kill to the first answer after it (of any run). */
  recoveryS: number[];
  /** Seconds from each kill until every run in flight at the kill was answered. */
  drainedS: number[];
}

/** One kill: when, the runs in flight then that are still unanswered, and what followed. */
interface Kill {
  at: number;
  open: Set<string>;
  firstAnswerS?: number;
  drainedS?: number;
  /** Whether the replacement is ready. */
  replaced: boolean;
}

/** Which process a kill test SIGKILLs: the orchestrator, or one tool worker. */
export type KillTarget = "orchestrator" | "worker";

/** How the kill test runs. */
export interface KillOptions {
  /** The process killed each time (and replaced at once, as a supervisor would). */
  target: KillTarget;
  runs: number;
  kills: number;
  /** A run starts every `spacingMs`, whatever the answers do. */
  spacingMs: number;
  /** A run unanswered this long after the last answer is lost. */
  giveUpMs: number;
  effectsFile: string;
  /**
   * Seeds the moment of each kill within `spacingMs` after its mark is reached (1 by default):
   * a kill at a random phase of the runs' cadence, the same ones for every system of a run.
   */
  phaseSeed?: number;
}

/** SIGKILLs `target` of `system` and resolves once its replacement is ready. */
function killTarget(system: PeerSystem, target: KillTarget): Promise<void> {
  return target === "worker" ? system.killToolWorker() : system.killOrchestrator();
}

/**
 * At least `runs` runs, one started every `spacingMs` (more while kills remain, up to three
 * times as many); the orchestrator or one tool worker (`target`) is SIGKILLed (and restarted,
 * as a supervisor would) `kills` times: kill k once the k-th of evenly spaced marks of runs started is passed, runs are in
 * flight, the previous kill's replacement is ready and a run was answered since that kill. A
 * run unanswered `giveUpMs` after the last answer is lost.
 */
export async function killTest(
  system: PeerSystem,
  tag: string,
  options: KillOptions,
): Promise<KillFigures> {
  const { runs, kills } = options;
  const marks = Array.from({ length: kills }, (_, k) =>
    Math.round(((k + 0.6) * runs) / (kills + 1)),
  );
  const done: Kill[] = [];
  const pending = new Map<string, number>();
  let started = 0;
  let answered = 0;
  let lastAnswerAt = performance.now();
  const phase = createRandom(options.phaseSeed ?? 1);
  let arming = false;
  const maybeKill = () => {
    const previous = done.at(-1);
    const settled = !previous || (previous.replaced && previous.firstAnswerS !== undefined);
    if (arming || done.length >= kills || pending.size === 0 || !settled) return;
    if (started < (marks[done.length] as number)) return;
    // Not at the run start or answer that passed the mark: at a random phase after it, so
    // which process holds the oldest run in flight is not set by the runs' cadence.
    arming = true;
    setTimeout(() => {
      arming = false;
      if (pending.size === 0) return; // nothing in flight: the next start or answer arms again
      fireKill();
    }, phase.next() * options.spacingMs);
  };
  const fireKill = () => {
    const kill: Kill = { at: performance.now(), open: new Set(pending.keys()), replaced: false };
    done.push(kill);
    killTarget(system, options.target).then(
      () => {
        kill.replaced = true;
      },
      (err: unknown) => console.error(`[peers] ${system.name}: no replacement: ${String(err)}`),
    );
  };
  const onAnswer = (key: string) => {
    answered++;
    const now = performance.now();
    lastAnswerAt = now;
    for (const kill of done) {
      kill.firstAnswerS ??= (now - kill.at) / 1000;
      if (kill.open.delete(key) && kill.open.size === 0) kill.drainedS = (now - kill.at) / 1000;
    }
    maybeKill();
  };
  let check: NodeJS.Timeout | undefined;
  const giveUp = new Promise<string>((resolve) => {
    check = setInterval(() => {
      if (performance.now() - lastAnswerAt < options.giveUpMs) return;
      clearInterval(check);
      resolve("lost");
    }, 500);
  });
  const all: Promise<void>[] = [];
  for (let i = 0; i < runs || (done.length < kills && i < runs * 3); i++) {
    const key = `${tag}-${i}`;
    pending.set(key, performance.now());
    started++;
    all.push(
      Promise.race([system.run(key).catch(() => "failed"), giveUp]).then((answer) => {
        pending.delete(key);
        if (answer === FINAL_ANSWER) onAnswer(key);
      }),
    );
    maybeKill();
    await sleep(options.spacingMs);
  }
  await Promise.all(all);
  clearInterval(check);
  await sleep(600);
  return {
    runs: started,
    kills: done.length,
    answered,
    lost: started - answered,
    toolsTwice: await countTwice(options.effectsFile, `${tag}-`),
    recoveryS: done.flatMap((kill) => (kill.firstAnswerS === undefined ? [] : [kill.firstAnswerS])),
    drainedS: done.flatMap((kill) => (kill.drainedS === undefined ? [] : [kill.drainedS])),
  };
}

/** Tool calls of runs starting with `prefix` whose side effect appears more than once. */
async function countTwice(effectsFile: string, prefix: string): Promise<number> {
  const seen = new Map<string, number>();
  for (const line of (await readFile(effectsFile, "utf8")).split("\n")) {
    if (line.startsWith(prefix)) seen.set(line, (seen.get(line) ?? 0) + 1);
  }
  return [...seen.values()].filter((n) => n > 1).length;
}
