/**
 * Resource readings of other processes from `/proc` (Linux): CPU time of groups of processes
 * and their resident memory, sampled while a load runs.
 */
import { readdir, readFile } from "node:fs/promises";
import type { RedisClient } from "@yiem/core";
import { sleep } from "./clock.js";

/**
 * CPU time (user + system, milliseconds) used so far by process `pid`, from `/proc`;
 * `undefined` where `/proc` is not available.
 */
export function processCpuMs(pid: number): Promise<number | undefined> {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU time (ms) of the process or thread whose `/proc` `stat` file is `statFile`. */
async function statCpuMs(statFile: string): Promise<number | undefined> {
  try {
    const stat = await readFile(statFile, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) used so far by process `pid`'s main thread and by its other threads together
 * (V8's compiler and garbage-collector helpers, worker threads, libuv's pool), from
 * `/proc/<pid>/task/<tid>/stat`; `undefined` when the process is gone.
 */
export async function threadCpuMs(
  pid: number,
): Promise<{ main: number; others: number } | undefined> {
  try {
    const split = { main: 0, others: 0 };
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const ms = await statCpuMs(`/proc/${pid}/task/${tid}/stat`);
      if (tid === String(pid)) split.main += ms ?? 0;
      else split.others += ms ?? 0;
    }
    return split;
  } catch {
    return undefined;
  }
}

/** Named groups of process ids (a group's figures are the sum over its processes). */
export type ProcessGroups<K extends string> = Record<K, readonly number[]>;

/** Resident set size of `pid` in MiB (`VmRSS` of `/proc/<pid>/status`); `NaN` if unreadable. */
export async function readRssMb(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (ms) used so far by each group, summed over its processes (`NaN` if unreadable). */
export async function readGroupCpuMs<K extends string>(
  groups: ProcessGroups<K>,
): Promise<Record<K, number>> {
  const entries = await Promise.all(
    Object.entries<readonly number[]>(groups).map(async ([name, pids]) => {
      const values = await Promise.all(pids.map(processCpuMs));
      return [name, values.reduce<number>((sum, v) => sum + (v ?? Number.NaN), 0)] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<K, number>;
}

/** Each group's CPU time between two readings (ms). */
export function subtractCpu<K extends string>(
  after: Record<K, number>,
  before: Record<K, number>,
): Record<K, number> {
  const keys = Object.keys(after) as K[];
  return Object.fromEntries(keys.map((k) => [k, after[k] - before[k]])) as Record<K, number>;
}

/** A running RSS sampler. */
export interface RssSampler {
  /** Stops sampling; resolves with each group's peak (MiB, summed over the group per sample). */
  stop(): Promise<Record<string, number>>;
}

async function sampleGroups(groups: ProcessGroups<string>): Promise<Record<string, number>> {
  const entries = await Promise.all(
    Object.entries(groups).map(async ([name, pids]) => {
      const values = await Promise.all(pids.map(readRssMb));
      return [name, values.reduce((sum, v) => sum + v, 0)] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** Samples every group's summed RSS every `intervalMs` until stopped; keeps the peaks. */
export function startRssSampler(groups: ProcessGroups<string>, intervalMs: number): RssSampler {
  const peaks: Record<string, number> = Object.fromEntries(
    Object.keys(groups).map((name) => [name, Number.NaN]),
  );
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      for (const [name, mb] of Object.entries(await sampleGroups(groups))) {
        const peak = peaks[name] ?? Number.NaN;
        peaks[name] = Number.isNaN(peak) ? mb : Math.max(peak, mb);
      }
      await sleep(Math.max(0, intervalMs - (performance.now() - started)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peaks;
    },
  };
}

/** CPU time of the whole machine so far, every core and process (`/proc/stat`, ticks). */
export interface MachineTicks {
  busy: number;
  total: number;
}

/** Reads the machine's busy and total CPU ticks (`NaN` where `/proc/stat` is unreadable). */
export async function readMachineTicks(): Promise<MachineTicks> {
  try {
    const stat = await readFile("/proc/stat", "utf8");
    const fields = (/^cpu\s+(.*)$/m.exec(stat)?.[1] ?? "").split(/\s+/).map(Number);
    const total = fields.slice(0, 8).reduce((sum, v) => sum + v, 0); // user … steal
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

/** How many cores were busy on average between two readings, out of `cores`. */
export function countBusyCores(after: MachineTicks, before: MachineTicks, cores: number): number {
  return ((after.busy - before.busy) / (after.total - before.total)) * cores;
}

/** The pid of the Redis server behind `redis` (`INFO server` `process_id`). */
export async function readRedisPid(redis: RedisClient): Promise<number> {
  const info = await redis.info("server");
  const pid = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
  if (!Number.isInteger(pid)) throw new Error("INFO server has no process_id");
  return pid;
}
