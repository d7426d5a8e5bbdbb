import { randomUUID } from "node:crypto";
import type { Job, Worker } from "bullmq";
import type { Logger } from "./logger.js";
import type { RunSlots, Slot } from "./runSlots.js";

/** What the intake loop needs. */
export interface IntakeOptions {
  /** A BullMQ worker of the coordinator queue without a processor (manual fetching). */
  worker: Worker;
  slots: RunSlots;
  log: Logger;
  /** Takes a fetched job; owns `slot` from then on. Must not throw. */
  handle(job: Job, token: string, slot: Slot): Promise<void>;
}

/** The running intake loop. */
export interface Intake {
  /** Stops fetching; resolves once the loop has ended (within BullMQ's drain delay). */
  stop(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Fetches coordinator-queue jobs one at a time, and only while a run slot is free: a
 * coordinator never takes more new work than it can start, so idle coordinators get the
 * rest. Jobs that only wait for a session already running hand their slot back at once, so
 * a burst of follow-ups costs no slots. Fetch errors (Redis away) are retried every second.
 */
export function startIntake(options: IntakeOptions): Intake {
  const { worker, slots, log } = options;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const slot = await slots.take();
      if (stopped) {
        slot.release();
        break;
      }
      const token = randomUUID();
      let job: Job | undefined;
      try {
        job = await worker.getNextJob(token, { block: true });
      } catch (err) {
        slot.release();
        if (!stopped)
          log.warn({ err: (err as Error).message }, "could not fetch coordinator jobs; retrying");
        await sleep(1000);
        continue;
      }
      if (!job) {
        slot.release();
        continue;
      }
      void options.handle(job, token, slot).catch((err: unknown) => {
        log.error(
          { jobId: job?.id, err: (err as Error).message },
          "coordinator job handling failed",
        );
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      slots.wakeAll();
      await loop;
    },
  };
}
