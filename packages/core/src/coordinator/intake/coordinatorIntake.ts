import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Job, Worker } from "bullmq";
import type { Logger } from "../../ops/logger.js";
import { isConnectionError } from "../../redis/redisErrors.js";
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

/** How many jobs one round of a burst fetches at once (each needs a free run slot). */
const BURST_FETCHES = 16;

/** A fetch that takes this long (the block time is 1 s) is stuck, and is logged once. */
const STUCK_FETCH_MS = 30_000;

/** Fetches one job; the slot goes with it, or back when there is none. Never throws. */
async function fetchOne(options: IntakeOptions, slot: Slot, block: boolean): Promise<boolean> {
  const token = randomUUID();
  let job: Job | undefined;
  const watchdog = setTimeout(
    () => options.log.warn({ block }, "a coordinator-queue fetch has not returned for 30 s"),
    STUCK_FETCH_MS,
  );
  try {
    job = await options.worker.getNextJob(token, { block });
  } catch (err) {
    slot.release();
    // An outage is logged once by the Redis watch, not once per retry here.
    const level = isConnectionError(err) ? "debug" : "warn";
    options.log[level](
      { err: (err as Error).message },
      "could not fetch coordinator jobs; retrying",
    );
    await sleep(1000);
    return false;
  } finally {
    clearTimeout(watchdog);
  }
  if (!job) {
    slot.release();
    return false;
  }
  // Only the id is kept for the log line: the job (its input) is the handler's to let go of.
  const jobId = job.id;
  void options.handle(job, token, slot).catch((err: unknown) => {
    options.log.error({ jobId, err: (err as Error).message }, "coordinator job handling failed");
  });
  return true;
}

/** While jobs keep coming, fetches several at once without blocking (one round trip for many). */
async function fetchBurst(options: IntakeOptions, stopped: () => boolean): Promise<void> {
  while (!stopped()) {
    const slots: Slot[] = [];
    for (let i = 0; i < BURST_FETCHES; i++) {
      const slot = options.slots.tryTake();
      if (!slot) break;
      slots.push(slot);
    }
    if (slots.length === 0) return;
    const fetched = await Promise.all(slots.map((slot) => fetchOne(options, slot, false)));
    if (fetched.includes(false)) return;
  }
}

/**
 * Fetches coordinator-queue jobs only while a run slot is free: a coordinator never takes
 * more new work than it can start, so idle coordinators get the rest. It waits for a job with
 * one blocking fetch; once one comes, it fetches many at once until the queue is empty (a
 * burst of thousands of jobs is taken in a second or two, so a message behind it is not
 * kept waiting). Jobs that only wait for a session already running hand their slot back at
 * once, so a burst of follow-ups costs no slots. Fetch errors (Redis away) are retried every
 * second.
 */
export function startIntake(options: IntakeOptions): Intake {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const slot = await options.slots.take();
      if (stopped) {
        slot.release();
        break;
      }
      if (await fetchOne(options, slot, true)) await fetchBurst(options, () => stopped);
    }
  })();
  return {
    async stop() {
      stopped = true;
      options.slots.wakeAll();
      await loop;
    },
  };
}
