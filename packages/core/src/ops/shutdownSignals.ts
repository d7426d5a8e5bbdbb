import type { Logger } from "./logger.js";

/** Options of `onShutdownSignal`. */
export interface ShutdownOptions {
  /**
   * The most a shutdown may take: past it the process exits 1 whatever `stop` is waiting
   * for (a Redis that does not answer, a tool that ignores its signal). Default: none.
   */
  deadlineMs?: number;
}

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits 0 (1 if `stop` failed or
 * outlived `deadlineMs`). A second signal exits at once.
 */
export function onShutdownSignal(
  log: Logger,
  stop: () => Promise<void>,
  options: ShutdownOptions = {},
): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal, deadlineMs: options.deadlineMs }, "shutting down");
    if (options.deadlineMs !== undefined) {
      setTimeout(() => {
        log.error({ deadlineMs: options.deadlineMs }, "shutdown took too long; exiting");
        process.exit(1);
      }, options.deadlineMs).unref();
    }
    stop().then(
      () => {
        log.info("stopped cleanly");
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err: err instanceof Error ? err.message : String(err) }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", handle);
  process.on("SIGINT", handle);
}
