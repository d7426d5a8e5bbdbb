import type { Logger } from "./logger.js";

/** Options of `keepServingOnUnhandledRejection`. */
export interface UnhandledRejectionOptions {
  /**
   * The most rejections logged in full per minute; past it, one line a minute counts the
   * rest, so a flood of them cannot flood the log.
   * @defaultValue 20
   */
  maxLoggedPerMinute?: number;
}

/** The text and stack of whatever a promise rejected with. */
function describeReason(reason: unknown): { err: string; stack?: string; kind: string } {
  if (reason instanceof Error) {
    return { err: reason.message, stack: reason.stack, kind: reason.name };
  }
  return { err: String(reason), kind: typeof reason };
}

/**
 * Installs a process's last-resort handler for a promise rejection that nothing handled: it
 * logs the rejection at error level ("unhandled promise rejection; the process keeps
 * serving", with the process's name, the error's kind, message and stack) and the process
 * goes on serving its other sessions, calls and requests. Node's default would end the
 * process, and with it everything it holds: one hostile input could then end every process it
 * reaches in turn. The code a rejection belongs to fails its own call or request where it
 * awaits it; this handler only keeps a rejection that escaped from ending the rest. Installed by
 * the coordinator, tool worker and gateway processes (not by the library: an embedding
 * program decides for itself). Never throws; returns a function that removes the handler.
 *
 * @example keepServingOnUnhandledRejection(log, "coordinator");
 */
export function keepServingOnUnhandledRejection(
  log: Logger,
  processName: string,
  options: UnhandledRejectionOptions = {},
): () => void {
  const maxPerMinute = options.maxLoggedPerMinute ?? 20;
  let windowStart = Date.now();
  let logged = 0;
  let suppressed = 0;
  const handle = (reason: unknown) => {
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      if (suppressed > 0) {
        log.error({ process: processName, suppressed }, "more unhandled promise rejections");
      }
      windowStart = now;
      logged = 0;
      suppressed = 0;
    }
    if (logged >= maxPerMinute) {
      suppressed++;
      return;
    }
    logged++;
    log.error(
      { process: processName, ...describeReason(reason) },
      "unhandled promise rejection; the process keeps serving",
    );
  };
  process.on("unhandledRejection", handle);
  return () => {
    process.off("unhandledRejection", handle);
  };
}
