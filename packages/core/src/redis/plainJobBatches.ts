import type { RedisClient } from "./redisConnection.js";
import { AddPlainJobReply } from "./scriptReplies.js";
import { withScripts } from "./scripts.js";

/** The keys of a queue that `addPlainJobs.lua` reads and writes: wait, paused, meta, events, marker. */
export type PlainQueueKeys = readonly [string, string, string, string, string];

/** One job as `addPlainJobs.lua` takes it: its hash's key, then its id, name, data, opts, timestamp. */
export interface PlainJobArgs {
  key: string;
  /** Id, name, data (JSON), opts as BullMQ stores them (JSON), timestamp (ms). */
  args: readonly [string, string, string, string, string];
}

/** How one add of a batch ends: `AddPlainJobReply`, or the call's error. */
type AddReply = (typeof AddPlainJobReply)[keyof typeof AddPlainJobReply];

/** A job waiting in a batch, with its caller's promise's two ends. */
interface PendingJob extends PlainJobArgs {
  resolve(reply: AddReply): void;
  reject(err: unknown): void;
}

/** The jobs of one queue on one connection waiting for the end of the pass. */
interface Batch {
  queueKeys: PlainQueueKeys;
  jobs: PendingJob[];
}

/**
 * The most jobs one script call carries: a pass that adds more to one queue sends several
 * calls, so that no one call keeps Redis busy for long.
 */
const MAX_JOBS_PER_CALL = 100;

/** The batches of this pass, by connection, then by the queue's wait key. */
let open = new Map<RedisClient, Map<string, Batch>>();

/**
 * Adds job `job` to the queue of `queueKeys` through `addPlainJobs.lua`, with the other adds
 * this process issues to that queue on connection `redis` in the same pass of the event loop:
 * they go out together, as one script call, on `process.nextTick` (once the current callback
 * and every promise continuation it queued have run; no timer, so a lone add goes out as soon
 * as the code that issued it yields, as the connection's own writes do: `coalesceWrites`).
 * Each job is written as if added alone, in the order the adds were issued; the queue's meta
 * is read and its marker written once a call. Resolves with this job's `AddPlainJobReply`
 * (`notPlain` for every job of a call on a queue the script declines); a call that fails
 * rejects every add it carried with its error (the script is refused or fails as a whole,
 * having written nothing: out of memory, Redis away), which each caller may send again.
 * Commands sent on `redis` after this call may reach Redis before the job.
 *
 * @example await addPlainJobInPass(client, [wait, paused, meta, events, marker], { key, args })
 */
export function addPlainJobInPass(
  redis: RedisClient,
  queueKeys: PlainQueueKeys,
  job: PlainJobArgs,
): Promise<AddReply> {
  return new Promise<AddReply>((resolve, reject) => {
    batchOf(redis, queueKeys).jobs.push({ ...job, resolve, reject });
  });
}

/** The open batch of the queue of `queueKeys` on `redis`, opened (and the send planned) if none. */
function batchOf(redis: RedisClient, queueKeys: PlainQueueKeys): Batch {
  if (open.size === 0) process.nextTick(sendAll);
  let batches = open.get(redis);
  if (!batches) {
    batches = new Map();
    open.set(redis, batches);
  }
  const [wait] = queueKeys;
  let batch = batches.get(wait);
  if (!batch) {
    batch = { queueKeys, jobs: [] };
    batches.set(wait, batch);
  }
  return batch;
}

/** Sends every batch of the pass, each in calls of at most `MAX_JOBS_PER_CALL` jobs. */
function sendAll(): void {
  const sending = open;
  open = new Map();
  for (const [redis, batches] of sending) {
    for (const { queueKeys, jobs } of batches.values()) {
      for (let from = 0; from < jobs.length; from += MAX_JOBS_PER_CALL) {
        sendCall(redis, queueKeys, jobs.slice(from, from + MAX_JOBS_PER_CALL));
      }
    }
  }
}

/**
 * One `addPlainJobs.lua` call carrying `jobs`; settles each job's add with its reply (a throw
 * while sending rejects them, as a failed call does, never the other calls of the pass).
 */
function sendCall(redis: RedisClient, queueKeys: PlainQueueKeys, jobs: PendingJob[]): void {
  const reply = new Promise<number | number[]>((resolve) =>
    resolve(
      withScripts(redis).yiemAddPlainJobs(
        queueKeys.length + jobs.length,
        ...queueKeys,
        ...jobs.map((job) => job.key),
        ...jobs.flatMap((job) => job.args),
      ),
    ),
  );
  reply.then(
    (replies) => {
      for (const [i, job] of jobs.entries()) job.resolve(replyOf(replies, i));
    },
    (err: unknown) => {
      for (const job of jobs) job.reject(err);
    },
  );
}

/** Job `i`'s reply in a call's `replies`: `notPlain` for all when the script declined the queue. */
function replyOf(replies: number | number[], i: number): AddReply {
  if (!Array.isArray(replies)) return AddPlainJobReply.notPlain;
  return replies[i] === AddPlainJobReply.existed
    ? AddPlainJobReply.existed
    : AddPlainJobReply.added;
}
