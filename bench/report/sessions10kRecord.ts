import type { Sessions10k } from "../measurements/sessions10k.js";
import type { Plan } from "../plan.js";

/**
 * What one `--only sessions10k` run records (bench/sessions10k.json), apart from the full
 * run's results: when and where, and its figures.
 */
export interface Sessions10kRecord {
  date: string;
  cores: number;
  loadAverageAtStart: number;
  loadAverageAtEnd: number;
  durationS: number;
  plan: Plan["sessions10k"];
  figures: Sessions10k;
}

/** How many runs bench/sessions10k.json keeps (the targets must hold in three in a row). */
export const SESSIONS_10K_KEPT = 5;

/**
 * The runs of a bench/sessions10k.json, oldest first: its `runs`, or the one record a file
 * written before it kept several holds; none for anything else.
 */
export function recordsOf(stored: unknown): Sessions10kRecord[] {
  if (typeof stored !== "object" || stored === null) return [];
  if ("runs" in stored && Array.isArray(stored.runs)) return stored.runs as Sessions10kRecord[];
  return "figures" in stored ? [stored as Sessions10kRecord] : [];
}

/** `runs` with `record` appended, the last `SESSIONS_10K_KEPT` of them. */
export function appendRecord(
  runs: Sessions10kRecord[],
  record: Sessions10kRecord,
): Sessions10kRecord[] {
  return [...runs, record].slice(-SESSIONS_10K_KEPT);
}
