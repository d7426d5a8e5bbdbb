/**
 * What one Redis server says it has done: `INFO stats` `total_commands_processed` (a script
 * counts once) and `INFO commandstats` (each command by name, the commands a script runs
 * counted too), read before and after a load to give commands per run.
 */
import type { Redis } from "ioredis";

/** Calls per command name (`cmdstat_<name>:calls=…`), lower case. */
export type CommandCounts = Map<string, number>;

/** One command's calls per run. */
export interface CommandPerRun {
  command: string;
  perRun: number;
}

/** Commands per run of one load, by `INFO commandstats`. */
export interface CommandstatsPerRun {
  /** Every command's calls per run summed (the commands scripts run included). */
  perRun: number;
  /** The commands of most calls, most first, with their calls per run. */
  top: CommandPerRun[];
}

/** `INFO stats` `total_commands_processed`. */
export async function readCommandsProcessed(connection: Redis): Promise<number> {
  const info = await connection.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** Parses `INFO commandstats` into calls per command. */
export function parseCommandstats(info: string): CommandCounts {
  const counts: CommandCounts = new Map();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const [, name = "", calls = "0"] = match;
    counts.set(name.toLowerCase(), Number(calls));
  }
  return counts;
}

/** `INFO commandstats` of `connection`'s server. */
export async function readCommandstats(connection: Redis): Promise<CommandCounts> {
  return parseCommandstats(await connection.info("commandstats"));
}

/**
 * Commands per run between two readings, the `topCount` commands of most calls named; the
 * `info` calls of the readings themselves are left out.
 */
export function commandstatsPerRun(
  after: CommandCounts,
  before: CommandCounts,
  runs: number,
  topCount = 8,
): CommandstatsPerRun {
  const deltas: CommandPerRun[] = [];
  for (const [command, calls] of after) {
    if (command === "info") continue;
    const delta = calls - (before.get(command) ?? 0);
    if (delta > 0) deltas.push({ command, perRun: delta / runs });
  }
  deltas.sort((a, b) => b.perRun - a.perRun);
  return {
    perRun: deltas.reduce((sum, d) => sum + d.perRun, 0),
    top: deltas.slice(0, topCount),
  };
}
