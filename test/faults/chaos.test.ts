/**
 * The short chaos soak (`npm run chaos` runs the long one): two coordinators, three workers
 * as deployed, a Redis with AOF, a few hundred inputs while a seeded driver kills and stops
 * processes and restarts Redis; the checker must find no violation. Needs `npm run build`
 * (npm test runs it first).
 */
import { describe, expect, it } from "vitest";
import { KILL_FAULTS } from "../../chaos/faultDriver.js";
import { runSoak } from "../../chaos/soak.js";
import { recordFigure } from "../support/faults.js";

const SEED = 18;

describe("chaos: a short soak", () => {
  it("answers every input exactly once, keeps side effects within their bounds and transcripts well formed, while processes and Redis are killed", async () => {
    const result = await runSoak({
      runs: 300,
      seed: SEED,
      cluster: false,
      minutes: 3,
      kills: 6,
      concurrency: 6,
      gapMs: [1000, 3000],
    });
    const kills = result.faults.filter((f) => KILL_FAULTS.includes(f.kind)).length;
    const { requests, sideEffects, violations } = result.check;
    await recordFigure({
      scenario: `chaos soak, short (seed ${SEED})`,
      runs: requests.jobs,
      calls: sideEffects.calls,
      lost: requests.jobs - requests.answered,
      duplicated: requests.duplicates + sideEffects.duplicated,
      note: `${kills} kills, ${result.faults.length - kills} stops; ${sideEffects.executions} executions, ${sideEffects.atLeastOnceReruns} reruns the docs allow; ${violations.length} violations`,
    });
    expect(violations.map((v) => `[${v.check}] ${v.subject}: ${v.detail}`)).toEqual([]);
    expect(kills).toBeGreaterThan(0);
    expect(requests.jobs).toBeGreaterThanOrEqual(300);
    expect(requests.answered).toBe(requests.jobs);
    expect(sideEffects.calls).toBeGreaterThan(requests.jobs);
  }, 300_000);
});
