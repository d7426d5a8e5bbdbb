import type { Logger } from "./logger.js";

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits 0 (1 if `stop` failed).
 * A second signal exits at once.
 */
export function onShutdownSignal(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, "shutting down");
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
