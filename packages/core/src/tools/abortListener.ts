/** The callbacks waiting on each signal; one real listener per signal fans out to them. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

function callbacksOf(signal: AbortSignal): Set<() => void> {
  const existing = waiting.get(signal);
  if (existing) return existing;
  const callbacks = new Set<() => void>();
  waiting.set(signal, callbacks);
  signal.addEventListener(
    "abort",
    () => {
      waiting.delete(signal);
      for (const callback of [...callbacks]) callback();
    },
    { once: true },
  );
  return callbacks;
}

/**
 * Runs `callback` once when `signal` aborts (at once if it already has) and returns a
 * function that forgets it. However many calls of a run wait at the same time, the run's
 * signal carries one listener (Node warns past ten), and a finished wait leaves nothing behind.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => undefined;
  }
  const callbacks = callbacksOf(signal);
  const once = () => {
    callbacks.delete(once);
    callback();
  };
  callbacks.add(once);
  return () => {
    callbacks.delete(once);
  };
}
