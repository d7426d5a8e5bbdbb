/**
 * Rewrites the generated blocks of docs/RELIABILITY.md (`generatedBlocks.ts`; the rest of the
 * document is written by hand): its scenario table, from the figures the fault suite records in
 * test/faults/.figures/ (one JSON file per scenario), and the figures of the last full chaos
 * soak (chaos/figures.json, written by `npm run chaos`). Run with `npm run reliability`, which
 * runs the fault suite first, so the figures always come from a real run; with `--chaos-only`
 * (after a soak: `npx tsx --conditions=yiem-source scripts/reliabilityReport.ts --chaos-only`)
 * it rewrites the chaos block alone and leaves the scenario table as it is.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RecoveryTimes } from "../chaos/recovery.js";
import type { ChaosFigures } from "../chaos/report.js";
import type { ReliabilityFigure } from "../test/support/faults.js";
import { replaceGeneratedBlock } from "../test/support/generatedBlocks.js";

type Figure = ReliabilityFigure & { recordedAt: string };

const root = fileURLToPath(new URL("../", import.meta.url));
const figuresDir = join(root, "test/faults/.figures");

async function readFigures(): Promise<Figure[]> {
  const files = (await readdir(figuresDir)).filter((file) => file.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => JSON.parse(await readFile(join(figuresDir, file), "utf8")) as Figure),
  );
}

const chaosFiguresFile = join(root, "chaos/figures.json");

async function readChaosFigures(): Promise<ChaosFigures | undefined> {
  if (!existsSync(chaosFiguresFile)) return undefined;
  return JSON.parse(await readFile(chaosFiguresFile, "utf8")) as ChaosFigures;
}

/** How many faults of a soak stopped a process (SIGSTOP, then SIGCONT) instead of killing it. */
function stopsOf(chaos: ChaosFigures): number {
  return Object.entries(chaos.faults)
    .filter(([kind]) => kind.includes("SIGSTOP"))
    .reduce((n, [, count]) => n + (count ?? 0), 0);
}

/** A soak's child runs as the table shows them ("–" for a soak from before they were in it). */
function childRunsOf(chaos: ChaosFigures): string {
  const c = chaos.childCalls;
  return c ? `${c.calls} (${c.answered} / ${c.aborted})` : "–";
}

/** The recovery times of a soak (from its kills), on the timers it ran with. */
function renderRecovery(chaos: ChaosFigures): string {
  const r = chaos.recovery;
  if (!r) return "";
  return `
Recovery from its kills, on ${chaos.timers ?? "its timers"}, read from the processes' logs
(seconds, p50 / p99 / max over the kills that had something to recover):

| from the kill to | p50 | p99 | max | kills |
| --- | ---: | ---: | ---: | ---: |
${[
  ["the process found dead", r.detectedS],
  ["a killed coordinator's run resumed elsewhere", r.coordinatorResumedS],
  ["that run's first answer", r.coordinatorAnsweredS],
  ["a killed worker's call handed out again", r.workerHandedOutS],
]
  .map(([label, t]) => {
    const times = t as RecoveryTimes;
    return `| ${label as string} | ${times.p50S} | ${times.p99S} | ${times.maxS} | ${times.count} |`;
  })
  .join("\n")}
`;
}

/** The "Chaos soak" section: what the soak does and checks, and its last full run's figures. */
/** The chaos block: the last full soak's figures, or how to get them. */
function renderChaos(chaos: ChaosFigures | undefined): string {
  if (!chaos)
    return "No full soak recorded yet: `npm run chaos` writes `chaos/figures.json`, which this document reads.\n";
  return `Last full soak (${chaos.recordedAt}, ${Math.round(chaos.durationS / 60)} min${chaos.cluster ? ", Redis Cluster" : ""}), reproduced by
\`${chaos.command}\`:

| runs | sessions | kills | stops | aborts | approved / denied | answered | tool calls | executions | child runs (answered / aborted) | reruns allowed | duplicates | violations |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| ${chaos.runs} | ${chaos.sessions} | ${chaos.kills} | ${stopsOf(chaos)} | ${chaos.aborts} | ${chaos.approvals.approved} / ${chaos.approvals.denied} | ${chaos.answered} | ${chaos.calls} | ${chaos.executions} | ${childRunsOf(chaos)} | ${chaos.atLeastOnceReruns} | ${chaos.duplicates} | ${chaos.violations} |

| fault | count |
| --- | ---: |
${Object.entries(chaos.faults)
  .map(([kind, count]) => `| ${kind} | ${count} |`)
  .join("\n")}
${renderRecovery(chaos)}`;
}

function row(f: Figure): string {
  const recovery = f.recoveryMs === undefined ? "–" : `${(f.recoveryMs / 1000).toFixed(1)} s`;
  return `| ${f.scenario} | ${f.runs} | ${f.calls} | ${f.lost} | ${f.duplicated} | ${recovery} | ${f.note ?? ""} |`;
}

/** The scenarios block: one row per recorded scenario, and their totals. */
function renderScenarios(figures: Figure[]): string {
  const sum = (key: "runs" | "calls" | "lost" | "duplicated") =>
    figures.reduce((n, f) => n + f[key], 0);
  return `| scenario | runs | calls | lost | duplicated | recovery | notes |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
${figures.map(row).join("\n")}
| **total** | **${sum("runs")}** | **${sum("calls")}** | **${sum("lost")}** | **${sum("duplicated")}** | | |
`;
}

const docPath = join(root, "docs/RELIABILITY.md");
const chaosOnly = process.argv.includes("--chaos-only");
const figures = chaosOnly ? [] : await readFigures();
const doc = await readFile(docPath, "utf8");
const withScenarios = chaosOnly
  ? doc
  : replaceGeneratedBlock(doc, "scenarios", renderScenarios(figures));
await writeFile(
  docPath,
  replaceGeneratedBlock(withScenarios, "chaos", renderChaos(await readChaosFigures())),
);
console.log(
  chaosOnly
    ? "docs/RELIABILITY.md: the chaos block"
    : `docs/RELIABILITY.md: ${figures.length} scenarios`,
);
