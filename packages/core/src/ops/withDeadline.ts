import { YiemError } from "../errors/yiemError.js";

/**
 * Thrown by `withDeadline` when the work outlives its deadline; reads `timed out after <ms> ms`.
 * Transient: the work may finish in time on another try.
 */
export class DeadlineError extends YiemError {
  override name = "DeadlineError";
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`, { retry: "transient" });
  }
}

/**
 * Settles as `work` does, or rejects with `DeadlineError` after `ms`, whichever comes first.
 * Never cancels `work` (it goes on, unobserved, and a late rejection of it is swallowed); the
 * timer is cleared as soon as either settles and never keeps the process alive.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
