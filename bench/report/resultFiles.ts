import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../../test/support/processes.js";
import { headlineMeanings } from "./headlines.js";
import { performanceMarkdown } from "./performanceDoc.js";
import type { BenchResults } from "./results.js";
import { appendToHistory, type HistoryEntry, readHistory } from "./runHistory.js";

/** Where a full run leaves its figures: the raw results, the history of targets, the document. */
export const RESULT_FILES = {
  results: join(repoRoot, "bench", "results.json"),
  history: join(repoRoot, "bench", "history.json"),
  doc: join(repoRoot, "docs", "PERFORMANCE.md"),
} as const;

/** Writes `docs/PERFORMANCE.md` for `results` and `history`. */
async function writeDoc(results: BenchResults, history: HistoryEntry[]): Promise<void> {
  await writeFile(RESULT_FILES.doc, performanceMarkdown(results, headlineMeanings(), history));
}

/**
 * Writes a full run's figures: `bench/results.json`, the run appended to `bench/history.json`,
 * and `docs/PERFORMANCE.md` rendered from both; returns the paths written.
 */
export async function writeResults(results: BenchResults): Promise<string[]> {
  await writeFile(RESULT_FILES.results, `${JSON.stringify(results, null, 2)}\n`);
  const history = await appendToHistory(RESULT_FILES.history, results);
  await writeDoc(results, history);
  return [RESULT_FILES.results, RESULT_FILES.history, RESULT_FILES.doc];
}

/**
 * Renders `docs/PERFORMANCE.md` again from the committed `bench/results.json` and
 * `bench/history.json`, measuring nothing and appending nothing to the history; returns the
 * path written. The same files give the same document, so `git diff docs/PERFORMANCE.md`
 * after it shows what a change to the rendering changed.
 */
export async function renderFromFiles(): Promise<string> {
  const results = JSON.parse(await readFile(RESULT_FILES.results, "utf8")) as BenchResults;
  await writeDoc(results, await readHistory(RESULT_FILES.history));
  return RESULT_FILES.doc;
}
