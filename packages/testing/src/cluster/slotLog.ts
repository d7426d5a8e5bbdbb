import { appendFileSync } from "node:fs";
import type { TestProcess } from "../processes/processes.js";

/** How often a slot log moves its process's lines from memory to its file. */
const LOG_FLUSH_MS = 1000;

/**
 * A process slot's log file: the lines of the slot's processes, one after the other, each
 * process after a `--- <time> <name> started, pid <pid>` line. Lines are moved (spliced out of
 * `TestProcess.lines`, so a long run holds none in memory) every second and on `flush`.
 */
export interface SlotLog {
  /** Follows `process` from now on (the previous one's last lines are moved first). */
  follow(process: TestProcess): void;
  /** Moves the lines the followed process has written since the last move. */
  flush(): void;
  /** Moves the last lines and stops the timer (`follow` starts it again). */
  close(): void;
}

/** Opens the log of the slot `name` at `file` (appended to; the folder must exist). */
export function openSlotLog(name: string, file: string): SlotLog {
  let followed: TestProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    const lines = followed?.lines.splice(0) ?? [];
    if (lines.length > 0) appendFileSync(file, `${lines.join("\n")}\n`);
  };
  return {
    follow(process) {
      flush();
      followed = process;
      appendFileSync(file, `--- ${new Date().toISOString()} ${name} started, pid ${process.pid}\n`);
      if (!timer) {
        timer = setInterval(flush, LOG_FLUSH_MS);
        timer.unref();
      }
    },
    flush,
    close() {
      clearInterval(timer);
      timer = undefined;
      flush();
    },
  };
}
