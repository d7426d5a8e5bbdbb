import { sleep } from "./clock.js";

/** How long a loop may run: at most `count` iterations and at most `maxMs` milliseconds. */
export interface LoopBounds {
  count: number;
  maxMs: number;
}

/**
 * One measured step. Resolves with its own latency when it measures one itself (e.g. an event
 * relay); otherwise the step's wall time is the sample.
 */
export type Step = () => Promise<number | undefined>;

/** Runs `step` sequentially within `bounds`; returns one sample (ms) per completed step. */
export async function sampleSequential(step: Step, bounds: LoopBounds): Promise<number[]> {
  const samples: number[] = [];
  const deadline = performance.now() + bounds.maxMs;
  while (samples.length < bounds.count && performance.now() < deadline) {
    const started = performance.now();
    const own = await step();
    samples.push(own ?? performance.now() - started);
  }
  return samples;
}

/** Options of `sampleInterleaved`. */
export interface InterleavedOptions {
  /** Warm-up steps per case, not recorded. */
  warmup: LoopBounds;
  /** Recorded steps per case. */
  samples: LoopBounds;
  /** The samples of each case are taken in this many alternating blocks. */
  rounds: number;
}

/**
 * Measures several cases fairly: warms each up, then takes their samples in alternating
 * blocks (A, B, C, A, B, C, …) so that drift of the machine affects all of them alike.
 */
export async function sampleInterleaved(
  cases: Record<string, Step>,
  options: InterleavedOptions,
): Promise<Record<string, number[]>> {
  const names = Object.keys(cases);
  const results: Record<string, number[]> = {};
  for (const name of names) {
    const step = cases[name];
    if (step) await sampleSequential(step, options.warmup);
    results[name] = [];
  }
  const perRound = {
    count: Math.ceil(options.samples.count / options.rounds),
    maxMs: options.samples.maxMs / options.rounds,
  };
  for (let round = 0; round < options.rounds; round++) {
    for (const name of names) {
      const step = cases[name];
      if (step) results[name]?.push(...(await sampleSequential(step, perRound)));
    }
    await sleep(5); // let timers and stragglers of one block settle before the next
  }
  return results;
}
