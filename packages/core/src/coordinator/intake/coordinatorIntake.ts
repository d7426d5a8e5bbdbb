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
  /** A new lock token for a job (naming this coordinator's life, see `holderToken`). */
  token(): string;
  /** Takes a fetched job; owns `slot` from then on. Must not throw. */
  handle(job: Job, token: string, slot: Slot): Promise<void>;
  /**
   * Awaited once, after the first job fetched and before any more are: lets that first run go
   * alone for a while (`firstRunAlone`). Default: nothing to wait for.
   */
  afterFirstJob?: () => Promise<void>;
  /**
   * What the worker's last take said of the queue (`SafeTakeWorker.jobsLeft`): `false` when it
   * left no job waiting. Default: it does not say.
   */
  jobsLeft?: () => boolean | undefined;
}

/** The running intake loop. */
export interface Intake {
  /** Stops fetching; resolves once the loop has ended (within BullMQ's drain delay). */
  stop(): Promise<void>;
}

/** How many jobs one round of a burst fetches at once (each needs a free run slot). */
const BURST_FETCHES = 16;

/**
 * A blocking fetch that takes this long (the block time is 1 s, BullMQ's own watchdog 2 s) is
 * stuck: its connection is wedged (seen after a Redis Cluster failover). The intake then
 * fetches without blocking, on the command connection, until the stuck fetch returns.
 */
const STUCK_FETCH_MS = 5000;

/** How often a coordinator looks for jobs while its blocking fetch is stuck. */
const STUCK_POLL_MS = 250;

/** A blocking fetch's outcome: it returned (with a job or not), or it is stuck and still open. */
type BlockingFetch =
  | { kind: "returned"; fetched: boolean }
  | { kind: "stuck"; returned: Promise<unknown> };

/** Fetches one job; the slot goes with it, or back when there is none. Never throws. */
async function fetchOne(options: IntakeOptions, slot: Slot, block: boolean): Promise<boolean> {
  const token = options.token();
  let job: Job | undefined;
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
  }
  if (!job) {
    slot.release();
    return false;
  }
  // Only the id is kept for the log line: the job (its input) is the handler's to let go of.
  const requestId = job.id;
  void options.handle(job, token, slot).catch((err: unknown) => {
    options.log.error(
      { requestId, err: (err as Error).message },
      "coordinator job handling failed",
    );
  });
  return true;
}

/**
 * Fetches one job blocking, but waits for it at most `STUCK_FETCH_MS`: a fetch still open then
 * is reported stuck, and goes on by itself (a job it brings later is handled with its slot).
 */
async function fetchBlocking(options: IntakeOptions, slot: Slot): Promise<BlockingFetch> {
  const fetch = fetchOne(options, slot, true);
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<"stuck">((resolve) => {
    timer = setTimeout(() => resolve("stuck"), STUCK_FETCH_MS);
  });
  const first = await Promise.race([fetch, stuck]);
  clearTimeout(timer);
  return first === "stuck"
    ? { kind: "stuck", returned: fetch }
    : { kind: "returned", fetched: first };
}

/**
 * While jobs keep coming, fetches several at once without blocking (one round trip for many).
 * A round fetches twice as many as the one before, up to `BURST_FETCHES`, and the burst ends
 * at the first round that comes back short, or after which the worker's last take left no job
 * waiting (`jobsLeft`): a lone job costs no empty fetch after it (without `jobsLeft`, one), not
 * `BURST_FETCHES` (each fetch is a script of about ten Redis commands). A job added after that
 * take is announced by the queue's marker, which the next blocking fetch wakes on.
 */
async function fetchBurst(options: IntakeOptions, stopped: () => boolean): Promise<void> {
  if (options.jobsLeft?.() === false) return;
  for (let size = 1; !stopped(); size = Math.min(size * 2, BURST_FETCHES)) {
    const slots: Slot[] = [];
    for (let i = 0; i < size; i++) {
      const slot = options.slots.tryTake();
      if (!slot) break;
      slots.push(slot);
    }
    if (slots.length === 0) return;
    const fetched = await Promise.all(slots.map((slot) => fetchOne(options, slot, false)));
    if (fetched.includes(false) || options.jobsLeft?.() === false) return;
  }
}

/**
 * Fetches coordinator-queue jobs only while a run slot is free: a coordinator never takes
 * more new work than it can start, so idle coordinators get the rest. It waits for a job with
 * one blocking fetch; once one comes, it fetches many at once until the queue is empty (a
 * burst of thousands of jobs is taken in a second or two, so a message behind it is not
 * kept waiting; a job its take said was the last waiting is not followed by a burst), except
 * after the very first job, which first goes alone for a while
 * (`afterFirstJob`). Jobs that only wait for a session already running hand their slot back at
 * once, so a burst of follow-ups costs no slots. Fetch errors (Redis away) are retried every
 * second. A blocking fetch that does not return in `STUCK_FETCH_MS` (a wedged blocking
 * connection, as after a Redis Cluster failover) does not stop the intake: it fetches without
 * blocking every `STUCK_POLL_MS` until that fetch returns.
 */
export function startIntake(options: IntakeOptions): Intake {
  let stopped = false;
  let stuckFetch: Promise<unknown> | undefined;
  let firstJob: (() => Promise<void>) | undefined = options.afterFirstJob;
  const noteStuck = (returned: Promise<unknown>) => {
    options.log.warn(
      { afterMs: STUCK_FETCH_MS },
      "a blocking coordinator-queue fetch is stuck; fetching without blocking until it returns",
    );
    stuckFetch = returned.then(() => {
      stuckFetch = undefined;
      options.log.info("the stuck coordinator-queue fetch returned; blocking again");
    });
  };
  const loop = (async () => {
    while (!stopped) {
      const slot = await options.slots.take();
      if (stopped) {
        slot.release();
        break;
      }
      if (stuckFetch) {
        if (await fetchOne(options, slot, false)) await fetchBurst(options, () => stopped);
        else await sleep(STUCK_POLL_MS);
        continue;
      }
      const fetch = await fetchBlocking(options, slot);
      if (fetch.kind === "stuck") noteStuck(fetch.returned);
      else if (fetch.fetched) {
        await firstJob?.();
        firstJob = undefined;
        await fetchBurst(options, () => stopped);
      }
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
