import { parseArgs } from "node:util";
import type { SoakOptions } from "./soak.js";

/** The usage line of `npm run chaos`. */
export const CHAOS_USAGE =
  "npm run chaos -- [--runs N] [--seed S] [--cluster] [--minutes M] [--kills K] [--concurrency C] [--no-figures]";

/** Command-line options of `npm run chaos`, with `writeFigures` (false under `--no-figures`). */
export interface ChaosCommand {
  soak: SoakOptions;
  writeFigures: boolean;
}

function positiveInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`--${name} must be a whole number, got "${text}"`);
  return value;
}

/**
 * Reads the command line: `--runs` (default 2000), `--seed` (default: random, printed),
 * `--cluster`, `--minutes` (a time limit, default 40), `--kills` (default runs / 20),
 * `--concurrency` (sessions at once, default 4: a soak of 2,000 runs and 100 kills then
 * sends about 6,000 inputs, within the coordinator queue's retention of 10,000 finished jobs), `--no-figures` (do not write
 * chaos/figures.json).
 */
export function parseChaosCommand(argv: string[]): ChaosCommand {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: "string" },
      seed: { type: "string" },
      cluster: { type: "boolean", default: false },
      minutes: { type: "string" },
      kills: { type: "string" },
      concurrency: { type: "string" },
      "no-figures": { type: "boolean", default: false },
    },
    strict: true,
  });
  const runs = positiveInt("runs", values.runs, 2000);
  return {
    soak: {
      runs,
      seed: positiveInt("seed", values.seed, Math.floor(Math.random() * 2 ** 31)),
      cluster: values.cluster === true,
      minutes: positiveInt("minutes", values.minutes, 40),
      kills: positiveInt("kills", values.kills, Math.ceil(runs / 20)),
      concurrency: positiveInt("concurrency", values.concurrency, 4),
      gapMs: [500, 2500],
    },
    writeFigures: values["no-figures"] !== true,
  };
}
