import type { Queue } from "bullmq";
import { onProcessWarm } from "../../ops/processWarm.js";

/** The longest the HTTP side waits for a first run, from the moment the coordinator took work. */
export const FIRST_RUN_WAIT_MS = 2000;

/** The longest the HTTP side waits for the runtime to start taking work (Redis away, say). */
export const RUNTIME_WAIT_MS = 1000;

/** What `httpSideMayStart` reads of the starting runtime. */
export interface StartingRuntime {
  /** Whether runs waited on the coordinator queue as it began taking work (`runsWaitOn`). */
  runsWaitedAtStart: boolean;
}

/** Resolves after `ms`, on a timer that does not keep the process up. */
function after(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Resolves once the process did its first piece of work (`markProcessWarm`). */
function warm(): Promise<void> {
  return new Promise((resolve) => onProcessWarm(resolve));
}

/**
 * Whether runs wait on `queue` (waiting or prioritized jobs): read once, just before the
 * coordinator takes work. Never rejects: Redis away reads as none.
 *
 * @example const runsWaitedAtStart = await runsWaitOn(coordinatorQueue);
 */
export function runsWaitOn(queue: Queue): Promise<boolean> {
  return queue.getJobCountByTypes("waiting", "prioritized").then(
    (count) => count > 0,
    () => false,
  );
}

/**
 * Resolves when a coordinator's HTTP side (express, Bull Board's mount, the front door thread)
 * may start: when runs waited as the runtime began taking work (a replacement finding the runs
 * sent while no coordinator was up), once its first run finished, or `FIRST_RUN_WAIT_MS` after
 * it began taking work (another coordinator took them, or the run is slow); when none waited,
 * at once; and `RUNTIME_WAIT_MS` after this call when the runtime is not taking work by then
 * (Redis away, a start that failed), so `/healthz` and `/readyz` answer meanwhile. So the first
 * answer a waiting client gets from a replacement does not share its main thread with the HTTP
 * side's start (some 40 ms of CPU: express's modules, the server, the thread). Never rejects.
 *
 * @example await httpSideMayStart(startingRuntime); await startAdminServer(options);
 */
export async function httpSideMayStart(starting: Promise<StartingRuntime>): Promise<void> {
  const taking = starting.catch(() => undefined); // a failed start: the HTTP side at once
  const runtime = await Promise.race([taking, after(RUNTIME_WAIT_MS)]);
  if (!runtime?.runsWaitedAtStart) return;
  await Promise.race([warm(), after(FIRST_RUN_WAIT_MS)]);
  await new Promise((resolve) => setImmediate(resolve)); // the first answer's replies go first
}
