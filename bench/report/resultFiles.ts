import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../../test/support/processes.js";
import { headlineMeanings } from "./headlines.js";
import type { PeersRecord } from "./peersRecord.js";
import { performanceMarkdown } from "./performanceDoc.js";
import { type BenchResults, toResults } from "./results.js";
import { appendToHistory, type HistoryEntry, readHistory } from "./runHistory.js";
import { appendRecord, recordsOf, type Sessions10kRecord } from "./sessions10kRecord.js";

/** Where the opt-in 10,000-sessions scenario leaves its record. */
export const SESSIONS_10K_FILE = join(repoRoot, "bench", "sessions10k.json");

/**
 * Adds a run to the 10,000-sessions record (which keeps the last few, so that a reader sees
 * whether the targets held in a row); returns the path written.
 */
export async function writeSessions10k(record: Sessions10kRecord): Promise<string> {
  const runs = appendRecord(await readSessions10k(), record);
  await writeFile(SESSIONS_10K_FILE, `${JSON.stringify({ runs }, null, 2)}\n`);
  return SESSIONS_10K_FILE;
}

/** The runs of the 10,000-sessions record, oldest first (none before one was written). */
async function readSessions10k(): Promise<Sessions10kRecord[]> {
  try {
    return recordsOf(JSON.parse(await readFile(SESSIONS_10K_FILE, "utf8")));
  } catch {
    return [];
  }
}

/** Where `npm run bench -- --peers` leaves its record (read when the document is written). */
export const PEERS_FILE = join(repoRoot, "bench", "peers", "results.json");

/** The last peers run, if one was recorded. */
async function readPeers(): Promise<PeersRecord | undefined> {
  try {
    return JSON.parse(await readFile(PEERS_FILE, "utf8")) as PeersRecord;
  } catch {
    return undefined;
  }
}

/** Where a run leaves its figures: the raw results, the history of targets, the document. */
export interface ResultFiles {
  results: string;
  history: string;
  doc: string;
}

/** The repository's result files, which a full run writes. */
export const RESULT_FILES: ResultFiles = {
  results: join(repoRoot, "bench", "results.json"),
  history: join(repoRoot, "bench", "history.json"),
  doc: join(repoRoot, "docs", "PERFORMANCE.md"),
};

/**
 * The files of a `--quick` run: in `<tmpdir>/yiem-bench-quick/`, the history starting as a
 * copy of the repository's (so the document renders as a full run's would).
 */
export async function quickResultFiles(): Promise<ResultFiles> {
  const dir = join(tmpdir(), "yiem-bench-quick");
  await mkdir(dir, { recursive: true });
  const files = {
    results: join(dir, "results.json"),
    history: join(dir, "history.json"),
    doc: join(dir, "PERFORMANCE.md"),
  };
  await copyFile(RESULT_FILES.history, files.history);
  return files;
}

/**
 * Writes the document for `results` and `history` (and the 10,000-sessions and peers records)
 * to `path`.
 */
async function writeDoc(results: BenchResults, history: HistoryEntry[], path: string) {
  const [sessions10k, peers] = await Promise.all([readSessions10k(), readPeers()]);
  await writeFile(
    path,
    performanceMarkdown(results, headlineMeanings(), history, sessions10k, peers),
  );
}

/**
 * Writes a run's figures to `files`: the results, the run appended to the history, and the
 * document rendered from both; returns the paths written.
 */
export async function writeResults(
  results: BenchResults,
  files: ResultFiles = RESULT_FILES,
): Promise<string[]> {
  await writeFile(files.results, `${JSON.stringify(results, null, 2)}\n`);
  const history = await appendToHistory(files.history, results);
  await writeDoc(results, history, files.doc);
  return [files.results, files.history, files.doc];
}

/**
 * Renders `docs/PERFORMANCE.md` again from the committed `bench/results.json` and
 * `bench/history.json`, measuring nothing and appending nothing to the history; returns the
 * path written. The headline figures and the targets are derived again from the stored
 * details, so a change to how they are derived shows too. The same files give the same
 * document, so `git diff docs/PERFORMANCE.md` after it shows what a change to the rendering
 * changed.
 */
export async function renderFromFiles(): Promise<string> {
  const stored = JSON.parse(await readFile(RESULT_FILES.results, "utf8")) as BenchResults;
  // The gateway's figures are measured alone (`--only gateway`, `--only gatewayReaders`) and
  // kept beside the details.
  const results = {
    ...toResults(stored.details),
    ...(stored.gateway ? { gateway: stored.gateway } : {}),
    ...(stored.gatewayReaders ? { gatewayReaders: stored.gatewayReaders } : {}),
    ...(stored.newSession ? { newSession: stored.newSession } : {}),
    ...(stored.flow ? { flow: stored.flow } : {}),
  };
  await writeDoc(results, await readHistory(RESULT_FILES.history), RESULT_FILES.doc);
  return RESULT_FILES.doc;
}
