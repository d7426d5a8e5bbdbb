import { readFile, writeFile } from "node:fs/promises";
import type { BenchResults, TargetCheck } from "./results.js";

/** One full bench run, as the history keeps it: when, and each target's value and verdict. */
export interface HistoryEntry {
  date: string;
  loadAverage?: number;
  targets: Array<Pick<TargetCheck, "target" | "limit" | "actual" | "met">>;
}

/** How many runs the history keeps (the newest last). */
const KEPT_RUNS = 10;

/** Reads the history file; an absent or unreadable one is an empty history. */
export async function readHistory(path: string): Promise<HistoryEntry[]> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as HistoryEntry[];
  } catch {
    return [];
  }
}

/**
 * Appends this run to the history at `path` (keeping the newest `KEPT_RUNS`) and returns it,
 * so a target that must hold "in three runs in a row" can be read off the document.
 */
export async function appendToHistory(
  path: string,
  results: BenchResults,
): Promise<HistoryEntry[]> {
  const entry: HistoryEntry = {
    date: results.date,
    targets: results.targets.map(({ target, limit, actual, met }) => ({
      target,
      limit,
      actual,
      met,
    })),
  };
  const history = [...(await readHistory(path)), entry].slice(-KEPT_RUNS);
  await writeFile(path, `${JSON.stringify(history, null, 2)}\n`);
  return history;
}

/** How many of the newest runs in a row met `target` (0 when the newest missed it). */
export function metInARow(history: HistoryEntry[], target: string): number {
  let count = 0;
  for (const entry of [...history].reverse()) {
    const check = entry.targets.find((t) => t.target === target);
    if (!check?.met) break;
    count++;
  }
  return count;
}
