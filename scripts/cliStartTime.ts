/**
 * How long the compiled `yiem` takes to start: the median wall time of `yiem --help` and
 * `yiem --version` over 15 runs each (after one warm-up run), next to `node -e 0` (the floor)
 * and to a Node process that imports all of `@yiem/core` (what the CLI loaded before it had
 * `@yiem/core/client`). Prints the figures, asserts nothing. Build first (`npm run build`),
 * then `npm run bench:cli`.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = 15;

/** One command line to time, and what to call it. */
interface Subject {
  label: string;
  args: string[];
}

const SUBJECTS: Subject[] = [
  { label: "node -e 0 (the floor)", args: ["-e", "0"] },
  { label: "yiem --help", args: ["apps/cli/bin/yiem.js", "--help"] },
  { label: "yiem --version", args: ["apps/cli/bin/yiem.js", "--version"] },
  {
    label: "node importing all of @yiem/core",
    args: ["--input-type=module", "-e", 'await import("@yiem/core")'],
  },
];

/** The wall time of one run of `node <args>` from the repository root, in ms. */
function timeOnce(args: string[]): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: "ignore" });
  if (run.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${run.status}`);
  return performance.now() - started;
}

/** The middle value (the mean of the two middle ones for an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Times `subject` RUNS times after a warm-up run; returns its median and range. */
function measure(subject: Subject): { median: number; min: number; max: number } {
  timeOnce(subject.args);
  const times = Array.from({ length: RUNS }, () => timeOnce(subject.args));
  return { median: median(times), min: Math.min(...times), max: Math.max(...times) };
}

console.log(`Start time, median of ${RUNS} runs (node ${process.version}, ${process.platform}):`);
for (const subject of SUBJECTS) {
  const { median: mid, min, max } = measure(subject);
  const figures = `${mid.toFixed(0)} ms  (${min.toFixed(0)}–${max.toFixed(0)})`;
  console.log(`  ${subject.label.padEnd(34)} ${figures}`);
}
