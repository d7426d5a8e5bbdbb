import type { Job, KeepJobs, Worker } from "bullmq";
import type { RedisClient } from "./redisConnection.js";
import { withScripts } from "./scripts.js";

/**
 * A tool job's end, recorded in the step that completes it: its finished marker (`toolDone`)
 * and the announcement the coordinators waiting for it read.
 */
export interface JobEndRecord {
  /** The marker's key, in the job's hash slot (one script on a Redis Cluster). */
  markerKey: string;
  /** The marker's value; `undefined` when it is already stored (only the announcement goes). */
  marker: string | undefined;
  markerTtlS: number;
  channel: string;
  message: string;
}

/**
 * How far past its age the oldest kept job may be before a finish prunes: a tenth of the age,
 * at most 10 s. BullMQ prunes at every finish (one job, each time, under steady load); here
 * one finish in a while does, in one batch, through BullMQ's own script. A worker's finishes
 * look about once a second.
 */
export function pruneSlackMs(ageS: number): number {
  return Math.min(10_000, Math.ceil(ageS * 100));
}

/** How often a worker's finishes look for old jobs to prune, at most. */
const PRUNE_LOOK_EVERY_MS = 1_000;

/** When each worker's finishes last looked for old jobs to prune. */
const lastPruneLook = new WeakMap<Worker, number>();

/** Whether a finish at `now` looks for old jobs to prune (about once a second per worker). */
function looksForPruning(worker: Worker, now: number): boolean {
  if (now - (lastPruneLook.get(worker) ?? 0) < PRUNE_LOOK_EVERY_MS) return false;
  lastPruneLook.set(worker, now);
  return true;
}

/** BullMQ's default length of a queue's event stream (its `opts.maxLenEvents`). */
const DEFAULT_MAX_EVENTS = 10_000;

/** The length of each worker's queue event stream, read once from the queue's meta hash. */
const maxEventsOf = new WeakMap<Worker, Promise<number>>();

/** What `Scripts.finishedErrors` makes of a script's negative code: BullMQ's own error. */
interface BullScripts {
  finishedErrors(args: { code: number; jobId?: string; command: string; state?: string }): Error;
}

/**
 * The jobs kept after completing, as BullMQ reads its options (`Scripts.getKeepJobs`): the
 * job's `removeOnComplete`, else the worker's; `count` -1 keeps every one, 0 none.
 */
export function keepJobsOf(
  jobOption: boolean | number | KeepJobs | undefined,
  workerOption: KeepJobs | undefined,
): KeepJobs {
  if (jobOption === undefined) return workerOption ?? { count: -1 };
  if (typeof jobOption === "object") return jobOption;
  if (typeof jobOption === "number") return { count: jobOption };
  return { count: jobOption ? 0 : -1 };
}

/**
 * Whether `job`, read whole as its worker took it, is plain: no parent, no deduplication id.
 * Then its completion need not read them again, and its `attemptsMade` is the hash's `atm`.
 */
export function isPlainAsTaken(job: Job): boolean {
  return !job.parentKey && !job.parent && !job.deduplicationId;
}

/** The event stream's length the queue of `worker` keeps (`opts.maxLenEvents`, default 10,000). */
async function maxEvents(worker: Worker): Promise<number> {
  let known = maxEventsOf.get(worker);
  if (!known) {
    known = worker.client
      .then((client) => client.hget(worker.toKey("meta"), "opts.maxLenEvents"))
      .then((text) => Number(text) || DEFAULT_MAX_EVENTS)
      .catch(() => DEFAULT_MAX_EVENTS);
    maxEventsOf.set(worker, known);
  }
  return known;
}

/** How `completeJobLean` completes a job, beyond its result. */
export interface LeanCompletionOptions {
  /** The tool job's end, recorded in the same step. */
  end?: JobEndRecord;
  /**
   * `job` is the object its worker took, read whole, or one built again from its id for a
   * job `isPlainAsTaken` found plain then: the script need not read its hash again.
   */
  taken?: boolean;
  /**
   * Completes it only if `key` holds the text whose SHA1 is `sha1` (a request job's answer,
   * stored by the close sent just before on the same connection); else `"not stored"`.
   */
  onlyIf?: { key: string; sha1: string };
}

/** How a completion went: done in Yiem's script, left to BullMQ's own, or not done (`onlyIf`). */
export type LeanCompletion = "completed" | "bullmq" | "not stored";

/**
 * Completes active job `job` of `worker` in one Yiem script (`completeJob-6.lua`): what
 * BullMQ's `moveToFinished` does for a plain job (some 10 commands where BullMQ's takes 19),
 * with `options.end`'s marker and announcement in the same step. Answers `"bullmq"` when the
 * job is not plain (a parent, a deduplication id), when it is time to prune old jobs, or when
 * the worker collects metrics: the caller then completes it with BullMQ
 * (`job.moveToCompleted`), and the end record is already written. Never takes a next job.
 *
 * Throws BullMQ's own error (its `code`: `classifyBullmqError`) when the job is no longer the
 * caller's (its lock gone or another's, not active), as `moveToCompleted` does; the marker and
 * the announcement are written whatever the answer. On success the job object says what
 * BullMQ's would: `returnvalue`, `finishedOn`, one more `attemptsMade`.
 *
 * @example if ((await completeJobLean(worker, job, token, result)) === "bullmq") await job.moveToCompleted(result, token, false);
 */
export async function completeJobLean(
  worker: Worker,
  job: Job,
  token: string,
  result: unknown,
  options: LeanCompletionOptions = {},
): Promise<LeanCompletion> {
  if (worker.opts.metrics?.maxDataPoints) return "bullmq";
  const { end, onlyIf } = options;
  const keep = keepJobsOf(job.opts.removeOnComplete, worker.opts.removeOnComplete);
  const jobId = job.id ?? "";
  const jobKey = worker.toKey(jobId);
  const now = Date.now();
  const returnvalue = JSON.stringify(result) ?? "null";
  const client = withScripts((await worker.client) as unknown as RedisClient);
  const age = "age" in keep ? keep.age : undefined;
  const count = keep.count ?? -1;
  const looks = (age !== undefined || count > 0) && looksForPruning(worker, now);
  const code = await client.yiemCompleteJob(
    ...["active", "stalled", "completed", "events"].map((name) => worker.toKey(name)),
    jobKey,
    end?.markerKey ?? onlyIf?.key ?? jobKey,
    ...[jobId, token, now, returnvalue],
    ...[count, age ?? "", looks ? pruneSlackMs(age ?? 0) : "", await maxEvents(worker)],
    ...[end?.marker ?? "", end?.markerTtlS ?? 0, end?.channel ?? "", end?.message ?? ""],
    options.taken && isPlainAsTaken(job) ? job.attemptsMade + 1 : "",
    onlyIf?.sha1 ?? "",
  );
  if (code < 0) {
    const scripts = (job as unknown as { scripts: BullScripts }).scripts;
    throw scripts.finishedErrors({ code, jobId, command: "moveToFinished", state: "active" });
  }
  if (code === 2) return "not stored";
  if (code !== 0) return "bullmq";
  job.returnvalue = result;
  job.finishedOn = now;
  job.attemptsMade += 1;
  return "completed";
}

/**
 * Writes `end` on its own (`recordToolEnd-1.lua`, or the announcement alone when the marker
 * is already stored), for a job BullMQ's script completes. Sent, not awaited, on the
 * connection BullMQ then completes the job on, so Redis stores the marker first.
 */
export function recordJobEndApart(client: RedisClient, end: JobEndRecord): Promise<unknown> {
  if (end.marker === undefined) return client.publish(end.channel, end.message);
  return withScripts(client).yiemRecordToolEnd(
    end.markerKey,
    end.marker,
    end.markerTtlS,
    end.channel,
    end.message,
  );
}

/**
 * Completes active job `job` of `worker` with `result`: in Yiem's script where it can
 * (`completeJobLean`, with `options`), else with BullMQ's `moveToCompleted`, taking no next
 * job either way. `"not stored"`: `options.onlyIf` did not hold, and nothing was done. Throws
 * what they throw (BullMQ's error when the job is no longer the caller's).
 *
 * @example await completeJob(worker, job, token, { answer: "Lima: 09:12" });
 */
export async function completeJob(
  worker: Worker,
  job: Job,
  token: string,
  result: unknown,
  options: Omit<LeanCompletionOptions, "end"> = {},
): Promise<"completed" | "not stored"> {
  const done = await completeJobLean(worker, job, token, result, options);
  if (done === "bullmq") await job.moveToCompleted(result, token, false); // onlyIf held, if any
  return done === "not stored" ? done : "completed";
}
