/** What is told once the process did its first piece of work; `undefined` once it was told. */
let waiting: Array<() => void> | undefined = [];

/**
 * Calls `listener` once the process did its first piece of work (`markProcessWarm`): a
 * coordinator's first finished run, a tool worker's first finished call. A bundled app's
 * loader writes its code cache then (`scripts/bundleLoader.ts`). Called at once when that
 * already happened.
 *
 * @example onProcessWarm(() => loader.warm())
 */
export function onProcessWarm(listener: () => void): void {
  if (waiting) waiting.push(listener);
  else callQuietly(listener);
}

/**
 * Says the process did its first piece of work: tells every `onProcessWarm` listener, once;
 * later calls do nothing. Never throws.
 */
export function markProcessWarm(): void {
  const listeners = waiting;
  if (!listeners) return;
  waiting = undefined;
  for (const listener of listeners) callQuietly(listener);
}

function callQuietly(listener: () => void): void {
  try {
    listener();
  } catch {
    // a listener's failure is its own: the work goes on
  }
}
