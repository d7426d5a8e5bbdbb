import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { readFileDurations } from "./fileDurations.js";

/**
 * Vitest's sequencer (`sequence.sequencer`): the test files `test/fileDurations.json` knows
 * start first, the longest first, so that no long file starts last and runs on alone while
 * the other workers idle (the suite lasts until its last file ends). The others follow in
 * vitest's own order (by the durations in its cache when it has them, by size otherwise: a
 * fresh clone has no cache). It never changes which files run, only their order.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const seconds = readFileDurations();
    const known = (spec: TestSpecification) =>
      seconds[relative(this.ctx.config.root, spec.moduleId)] ?? 0;
    return [...ordered].sort((a, b) => known(b) - known(a));
  }
}
