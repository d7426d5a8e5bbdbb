/**
 * Runs `callback` once when `signal` aborts (at once if it already has) and returns a
 * function that removes the listener. Callers dispose of it when their wait ends, so a run's
 * signal does not collect one listener per call (Node warns past ten, and they leak).
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => undefined;
  }
  signal.addEventListener("abort", callback, { once: true });
  return () => signal.removeEventListener("abort", callback);
}
