/**
 * Waits for the machine to go quiet between measured blocks: what one system left behind (a
 * database's dirty pages, its background writer, a compaction) must not land on the fsyncs or
 * the cores of the next system measured. Linux only (`/proc/stat`, `/proc/diskstats`); elsewhere
 * it returns at once.
 */
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { sleep } from "./clock.js";

/** What waiting for a quiet machine took. */
export interface QuietWait {
  /** Milliseconds waited, `sync` included. */
  waitedMs: number;
  /** Whether the machine went quiet before the bound (`false`: it was still busy at the bound). */
  quiet: boolean;
}

/** One sample of the machine's counters. */
interface Counters {
  busyTicks: number;
  allTicks: number;
  sectorsWritten: number;
}

/** The counters now, or `undefined` where `/proc` has none. */
async function readCounters(): Promise<Counters | undefined> {
  try {
    const [stat, disks] = await Promise.all([
      readFile("/proc/stat", "utf8"),
      readFile("/proc/diskstats", "utf8"),
    ]);
    const ticks = (stat.split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0); // idle + iowait
    const allTicks = ticks.reduce((sum, tick) => sum + tick, 0);
    let sectorsWritten = 0;
    for (const line of disks.split("\n")) {
      const fields = line.trim().split(/\s+/);
      // Whole disks only (a partition's writes are its disk's too): vda, sda, nvme0n1.
      if (fields[2] && /^(?:[vsh]d[a-z]+|nvme\d+n\d+|xvd[a-z]+)$/.test(fields[2]))
        sectorsWritten += Number(fields[9] ?? 0);
    }
    return { busyTicks: allTicks - idle, allTicks, sectorsWritten };
  } catch {
    return undefined;
  }
}

/**
 * Flushes dirty pages (`sync`), then waits until two windows of `windowMs` in a row each had
 * the cores at most `maxBusy` busy and the disks writing at most `maxWriteKb`, or `maxMs` passed.
 *
 * @example
 *   const { waitedMs, quiet } = await waitForQuietMachine();
 */
export async function waitForQuietMachine(
  options: { maxMs?: number; windowMs?: number; maxBusy?: number; maxWriteKb?: number } = {},
): Promise<QuietWait> {
  const { maxMs = 5000, windowMs = 200, maxBusy = 0.25, maxWriteKb = 256 } = options;
  const started = performance.now();
  spawnSync("sync");
  let before = await readCounters();
  if (!before) return { waitedMs: performance.now() - started, quiet: true };
  let quietWindows = 0;
  while (performance.now() - started < maxMs) {
    await sleep(windowMs);
    const after = await readCounters();
    if (!after) break;
    const busy =
      (after.busyTicks - before.busyTicks) / Math.max(1, after.allTicks - before.allTicks);
    const writtenKb = ((after.sectorsWritten - before.sectorsWritten) * 512) / 1024;
    before = after;
    quietWindows = busy <= maxBusy && writtenKb <= maxWriteKb ? quietWindows + 1 : 0;
    if (quietWindows >= 2) return { waitedMs: performance.now() - started, quiet: true };
  }
  return { waitedMs: performance.now() - started, quiet: false };
}
