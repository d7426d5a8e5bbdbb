import { type HistoryEntry, metInARow } from "../runHistory.js";
import { num, table } from "./markdown.js";

/** A run's value of one target: the measured figure and ✓ or ✗. */
function cell(entry: HistoryEntry, target: string): string {
  const check = entry.targets.find((t) => t.target === target);
  if (!check) return "–";
  return `${num(check.actual, 3)} ${check.met ? "✓" : "✗"}`;
}

/**
 * The "Recent runs" section: every target of the newest full runs (from `bench/history.json`),
 * one column a run, and how many runs in a row met each, newest first.
 */
export function historySection(history: HistoryEntry[]): string {
  const runs = history.slice(-5);
  const targets = runs.at(-1)?.targets.map((t) => t.target) ?? [];
  const rows = targets.map((target) => [
    target,
    ...runs.map((entry) => cell(entry, target)),
    String(metInARow(history, target)),
  ]);
  const heads = [
    "target",
    ...runs.map((entry) => entry.date.slice(0, 16).replace("T", " ")),
    "met in a row",
  ];
  return `## Recent runs

The targets over the last ${runs.length} full runs of \`npm run bench\` on this machine (oldest
first; \`bench/history.json\` keeps ten). "Met in a row" counts the newest runs that met the
target without a miss in between.

${table(heads, rows)}`;
}
