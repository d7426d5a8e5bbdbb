/** The "Child runs" section of `docs/PERFORMANCE.md` (issue 21: agents that call agents). */
import type { ChildRunOverhead } from "../../measurements/childRuns.js";
import type { Summary } from "../../sampling/stats.js";
import type { Measured } from "../results.js";
import { num, table } from "./markdown.js";
import { NOT_MEASURED } from "./sessionsSection.js";

function row(name: string, s: Summary, answered: string, cpuMs: number): string[] {
  return [name, answered, num(s.p50, 2), num(s.p90, 2), num(s.p99, 2), num(cpuMs, 2)];
}

/** What was measured and how. */
const METHOD = `Two kinds of run on one compiled coordinator (\`bench/measurements/childRuns.ts\`: a
private Redis, one compiled tool worker, a scripted model answering at once), one run at a time
with plain BullMQ (\`queue.add\` → \`waitUntilFinished\`), in blocks alternating between the
kinds in the same run: the agent \`plain\`'s model calls one remote no-op tool, then answers;
the agent \`parent\`'s model calls \`agent__child\` once, then answers. The child run is a
session and a coordinator job of its own whose model answers at once; the parent parks while
it runs and resumes with its answer. Both runs make two model calls of their own, the child run
one more (the child's). The coordinator's CPU (\`/proc/<pid>/stat\`) is read around each block.`;

function measuredWords(c: ChildRunOverhead): string {
  const header = ["run (ms)", "answered", "p50", "p90", "p99", "coordinator CPU per run"];
  const rows = [
    row(
      "calls `agent__child` once",
      c.child.latency,
      `${c.child.answered}/${c.child.runs}`,
      c.child.cpuMsPerRun,
    ),
    row(
      "calls one remote no-op tool",
      c.remote.latency,
      `${c.remote.answered}/${c.remote.runs}`,
      c.remote.cpuMsPerRun,
    ),
  ];
  return `${table(header, rows)}

A child run costs ${num(c.overheadP50Ms, 2)} ms over a remote call at p50 (${c.rounds} rounds of
${c.runsPerBlock} runs of each kind), and ${num(c.cpuRatio, 2)}× the coordinator's CPU per run: the child's
request job, its session's input, run and transcript, its model call and its answer delivered to
the parent's call, the parent's park and resume. The scenario took
${c.durationS === undefined ? "n/a" : num(c.durationS, 1)} s of the full run (\`--only childRuns\` runs it alone).`;
}

/** The section: the figures of the full run, or that they are not measured yet. */
export function childRunsSection(m: Measured): string {
  const body = m.childRuns
    ? measuredWords(m.childRuns)
    : `Figures: ${NOT_MEASURED} in a full run (the scenario joined the full run after the last one;
\`npm run bench -- --only childRuns\` prints them alone).`;
  return `## Child runs

${METHOD}

${body}`;
}
