import { onProcessWarm } from "../../ops/processWarm.js";

/** How long after the coordinator began taking work a run must have started to be waited for. */
export const FIRST_TAKE_MS = 20;

/** The longest the HTTP side waits for a first run, from the moment the coordinator took it. */
export const FIRST_RUN_WAIT_MS = 2000;

/** The longest the HTTP side waits for the runtime to start taking work (Redis away, say). */
export const RUNTIME_WAIT_MS = 1000;

/** What `httpSideMayStart` reads of the starting runtime. */
export interface StartingRuntime {
  /** The sessions its runs hold now. */
  heldSessions(): number;
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
 * Resolves when a coordinator's HTTP side (express, Bull Board's mount, the front door thread)
 * may start. When the runtime took a run within `FIRST_TAKE_MS` of taking work (a replacement
 * finding the runs that waited while no coordinator was up), once that first run finished, or
 * `FIRST_RUN_WAIT_MS` after it was taken; else at once. And `RUNTIME_WAIT_MS` after this call
 * when the runtime is not taking work by then (Redis away, a start that failed), so `/healthz`
 * and `/readyz` answer meanwhile. So the first answer a waiting client gets from a replacement
 * does not share its main thread with the HTTP side's start (some 40 ms of CPU: express's
 * modules, the server, the thread). Never rejects.
 *
 * @example await httpSideMayStart(startingRuntime); await startAdminServer(options);
 */
export async function httpSideMayStart(starting: Promise<StartingRuntime>): Promise<void> {
  const taking = starting.then(
    (runtime) => runtime,
    () => undefined,
  );
  const runtime = await Promise.race([taking, after(RUNTIME_WAIT_MS)]);
  if (!runtime) return;
  await after(FIRST_TAKE_MS);
  if (runtime.heldSessions() === 0) return; // nothing waited: start now
  await Promise.race([warm(), after(FIRST_RUN_WAIT_MS)]);
  await new Promise((resolve) => setImmediate(resolve)); // the first answer's replies go first
}
