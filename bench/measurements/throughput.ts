import type { RedisClient } from "@yiem/core";
import { sleep } from "../sampling/clock.js";
import { type Summary, summarize } from "../sampling/stats.js";
import { type BenchSession, type Harness, openSession, runBatch } from "../setup/harness.js";
import { type RawClient, rawJobData } from "../setup/rawBullmq.js";
import { type Rig, workerCpu } from "../setup/rig.js";
import { NOOP_TOOL } from "../setup/tools.js";

/** How a sustained run is shaped. */
export interface SustainedOptions {
  /** Concurrent loops ("sessions"), each making one call after another. */
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  /** A safety bound on the calls of the measured window. */
  maxCalls: number;
}

/** One measured window: calls, duration, latencies and resource deltas. */
export interface SustainedRound {
  calls: number;
  seconds: number;
  latencies: number[];
  usage: Usage;
}

/** What sustained runs achieved in their measured windows, and what a call cost. */
export interface Throughput {
  callsPerS: number;
  calls: number;
  seconds: number;
  /** Latency of the calls that ended inside the windows. */
  latency: Summary;
  /** Redis commands per call (INFO `total_commands_processed`). */
  redisCommandsPerCall: number;
  /** Redis CPU per call, microseconds (INFO `used_cpu_user` + `used_cpu_sys`). */
  redisCpuUsPerCall: number;
  /** CPU of this process (the coordinator side) per call, microseconds. */
  coordinatorCpuUsPerCall: number;
  /** CPU of the worker processes per call, microseconds (`/proc`; NaN where unavailable). */
  workerCpuUsPerCall: number;
}

/** Resources used: Redis commands, Redis CPU, this process's CPU, the workers' CPU. */
export interface Usage {
  commands: number;
  redisCpuMs: number;
  ownCpuMs: number;
  workerCpuMs: number;
}

function infoField(info: string, field: string): number {
  const match = new RegExp(`^${field}:([0-9.]+)`, "m").exec(info);
  return Number(match?.[1] ?? Number.NaN);
}

async function readUsage(command: RedisClient, workerCpuMs: () => Promise<number>): Promise<Usage> {
  const [stats, cpu, workers] = await Promise.all([
    command.info("stats"),
    command.info("cpu"),
    workerCpuMs(),
  ]);
  const own = process.cpuUsage();
  return {
    commands: infoField(stats, "total_commands_processed"),
    redisCpuMs: (infoField(cpu, "used_cpu_user") + infoField(cpu, "used_cpu_sys")) * 1000,
    ownCpuMs: (own.user + own.system) / 1000,
    workerCpuMs: workers,
  };
}

/**
 * Runs `concurrency` loops of `step` (each loop is one "session"): a warm-up, then a measured
 * window in which calls are counted and resources are read before and after. A failing
 * call stops every loop and is rethrown.
 */
export async function measureSustained(
  step: (loop: number) => Promise<void>,
  options: SustainedOptions,
  command: RedisClient,
  workerCpuMs: () => Promise<number>,
): Promise<SustainedRound> {
  let stop = false;
  let completed = 0;
  let measuring = false;
  let failure: unknown;
  const latencies: number[] = [];
  const loop = async (index: number) => {
    while (!stop) {
      const started = performance.now();
      try {
        await step(index);
      } catch (err) {
        failure ??= err;
        stop = true;
      }
      if (measuring) latencies.push(performance.now() - started);
      completed++;
    }
  };
  const loops = Array.from({ length: options.concurrency }, (_, i) => loop(i));
  await sleep(options.warmupMs);
  const before = await readUsage(command, workerCpuMs);
  const startedAt = performance.now();
  const startCount = completed;
  measuring = true;
  const deadline = startedAt + options.measureMs;
  while (!stop && performance.now() < deadline && completed - startCount < options.maxCalls)
    await sleep(20);
  const calls = completed - startCount;
  const seconds = (performance.now() - startedAt) / 1000;
  measuring = false;
  const after = await readUsage(command, workerCpuMs);
  stop = true;
  await Promise.all(loops);
  if (failure) throw failure;
  return {
    calls,
    seconds,
    latencies,
    usage: {
      commands: after.commands - before.commands,
      redisCpuMs: after.redisCpuMs - before.redisCpuMs,
      ownCpuMs: after.ownCpuMs - before.ownCpuMs,
      workerCpuMs: after.workerCpuMs - before.workerCpuMs,
    },
  };
}

/** Adds up measured windows into one throughput and per-call costs. */
export function combineRounds(rounds: SustainedRound[]): Throughput {
  const calls = rounds.reduce((sum, r) => sum + r.calls, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const total = (pick: (usage: Usage) => number) =>
    rounds.reduce((sum, r) => sum + pick(r.usage), 0);
  const perCallUs = (ms: number) => (ms * 1000) / calls;
  return {
    callsPerS: calls / seconds,
    calls,
    seconds,
    latency: summarize(rounds.flatMap((r) => r.latencies)),
    redisCommandsPerCall: total((u) => u.commands) / calls,
    redisCpuUsPerCall: perCallUs(total((u) => u.redisCpuMs)),
    coordinatorCpuUsPerCall: perCallUs(total((u) => u.ownCpuMs)),
    workerCpuUsPerCall: perCallUs(total((u) => u.workerCpuMs)),
  };
}

/** The sessions of the Yiem load: one per loop, each with its own lease. */
export function openLoadSessions(h: Harness, count: number): Promise<BenchSession[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => openSession(h, `load-${i}`)));
}

/** One window of sustained remote no-op calls, loop `i` working as session `i`. */
export function measureYiemRound(
  h: Harness,
  sessions: BenchSession[],
  options: SustainedOptions,
  workerCpuMs: () => Promise<number>,
): Promise<SustainedRound> {
  return measureSustained(
    async (i) => {
      const session = sessions[i];
      if (!session) throw new Error(`no session ${i}`);
      await runBatch(h, session, NOOP_TOOL, 1, { executor: session.remote });
    },
    options,
    h.command,
    workerCpuMs,
  );
}

/** One window of sustained raw BullMQ jobs under the same concurrency. */
export function measureRawRound(
  raw: RawClient,
  command: RedisClient,
  options: SustainedOptions,
  workerCpuMs: () => Promise<number>,
): Promise<SustainedRound> {
  const counters = new Array<number>(options.concurrency).fill(0);
  return measureSustained(
    async (i) => {
      counters[i] = (counters[i] ?? 0) + 1;
      await raw.call(NOOP_TOOL, rawJobData(`bench-load-${i}`, "r0000000", counters[i] ?? 0));
    },
    options,
    command,
    workerCpuMs,
  );
}

/** Sustained throughput of both sides: Yiem's remote calls and raw BullMQ jobs. */
export interface ThroughputPair {
  yiem: Throughput;
  raw: Throughput;
}

/**
 * Measures sustained load on the rig (whose pool should run two workers of each kind by now):
 * `rounds` windows per side, alternating Yiem and raw, `options.concurrency` loops each.
 */
export async function measureThroughput(
  rig: Rig,
  options: SustainedOptions,
  rounds: number,
  progress: (text: string) => void,
): Promise<ThroughputPair> {
  const sessions = await openLoadSessions(rig.harness, options.concurrency);
  const yiem: SustainedRound[] = [];
  const raw: SustainedRound[] = [];
  for (let round = 0; round < rounds; round++) {
    progress(`throughput round ${round + 1}/${rounds}: Yiem`);
    yiem.push(await measureYiemRound(rig.harness, sessions, options, workerCpu(rig.pool, "yiem")));
    progress(`throughput round ${round + 1}/${rounds}: raw BullMQ`);
    raw.push(
      await measureRawRound(rig.raw, rig.rawConnection, options, workerCpu(rig.pool, "raw")),
    );
  }
  await Promise.all(sessions.map((session) => session.transcript.settle()));
  return { yiem: combineRounds(yiem), raw: combineRounds(raw) };
}
