import { performance } from "node:perf_hooks";
import { onProcessWarm } from "../../ops/processWarm.js";

/** How often the event loop's use is read while the first run goes alone. */
const LOOK_MS = 50;

/** Below this share of a look's time spent running code, the loop has room for more runs. */
const ROOM_UTILIZATION = 0.5;

/**
 * Resolves once a coordinator that has just taken its first job may take more: when that run
 * finished (the process is warm: `onProcessWarm`), when its event loop had room during the
 * last `LOOK_MS` (the run waits on a slow model, a tool, an approval or a child run, so more
 * runs cost it nothing), or after `maxMs` at most. A replacement coordinator's code is not
 * compiled or optimised yet: the runs queued while it was down, started all at once, would
 * share that cold code's CPU and all answer late; the first one alone answers about as soon
 * as one run can, and warms the code for the others.
 *
 * @example await firstRunAlone(1000); // then fetch the rest
 */
export function firstRunAlone(maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    let last = performance.eventLoopUtilization();
    const look = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const { utilization } = performance.eventLoopUtilization(now, last);
      last = now;
      if (utilization < ROOM_UTILIZATION) done();
    }, LOOK_MS);
    const cap = setTimeout(done, maxMs);
    function done(): void {
      clearInterval(look);
      clearTimeout(cap);
      resolve();
    }
    onProcessWarm(done);
  });
}
