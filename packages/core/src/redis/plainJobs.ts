import { Job, type JobsOptions, type Queue } from "bullmq";
import { addPlainJobInPass } from "./plainJobBatches.js";
import type { RedisClient } from "./redisConnection.js";
import { AddPlainJobReply } from "./scriptReplies.js";

/** Options a plain job may have (those Yiem adds with); any other one set: BullMQ adds it. */
const PLAIN_OPTIONS = new Set([
  "jobId",
  "attempts",
  "timestamp",
  "removeOnComplete",
  "removeOnFail",
]);

/** A finite number, a boolean, or `{ age, count, limit }` of finite numbers (`KeepJobs`). */
function isPlainKeep(value: unknown): boolean {
  if (typeof value === "boolean" || Number.isFinite(value)) return true;
  if (
    typeof value !== "object" ||
    value === null ||
    Object.getPrototypeOf(value) !== Object.prototype
  )
    return false;
  return Object.entries(value).every(
    ([key, n]) =>
      n === undefined || (["age", "count", "limit"].includes(key) && Number.isFinite(n)),
  );
}

/** A job id BullMQ takes as it is: not empty, no `:`, not an integer (BullMQ refuses those). */
function isPlainId(jobId: unknown): jobId is string {
  return (
    typeof jobId === "string" &&
    jobId !== "" &&
    !jobId.includes(":") &&
    `${Number.parseInt(jobId, 10)}` !== jobId
  );
}

/**
 * Whether `opts` (the queue's default job options merged in, as `Queue.add` merges them) make a
 * plain job: its own id, and only the options of `PLAIN_OPTIONS` with plain values. A delay, a
 * priority, a parent, a deduplication, a repeat, lifo, or a queue with telemetry is not.
 */
function isPlain(queue: Queue, opts: JobsOptions): boolean {
  if (queue.opts.telemetry || !isPlainId(opts.jobId)) return false;
  return Object.entries(opts).every(([key, value]) => {
    if (value === undefined) return true;
    if (!PLAIN_OPTIONS.has(key)) return false;
    if (key === "attempts") return Number.isFinite(value);
    if (key === "timestamp") return Number.isSafeInteger(value);
    if (key === "jobId") return true;
    return isPlainKeep(value);
  });
}

/**
 * Adds a job to `queue` as `queue.add(name, data, opts)` does, in fewer commands than BullMQ's
 * 10 when the job is plain (`isPlain`): Yiem's script (`addPlainJobs.lua`) writes exactly what
 * BullMQ's addStandardJob would (the hash's fields and values, the wait or paused list, the
 * marker a blocked worker wakes on, the `waiting` event), from the job BullMQ's own `Job` class
 * makes of the options. The plain adds issued to one queue in the same pass of the event loop
 * go out as one script call (`addPlainJobInPass`): 7 commands for a lone job, 4 for each
 * further one (2 when its id exists). Anything else, or a queue with a global concurrency or
 * rate limit, is added by `queue.add`. A job whose id exists is left as it is (a `duplicated` event), as BullMQ leaves
 * it. Resolves with the job as `queue.add` does; rejects as it does (a failed script call:
 * with its error). Differences (docs/DECISIONS.md): no `added` event on the queue's events
 * stream, and the queue's id counter is not incremented.
 *
 * @example await addJobLean(queue, "getWeather", data, { jobId, attempts: 1, ...toolJobRetention(0) })
 */
export async function addJobLean<Data>(
  queue: Queue,
  name: string,
  data: Data,
  opts: JobsOptions & { jobId: string },
): Promise<Job> {
  const merged = { ...queue.jobsOpts, ...opts, jobId: opts.jobId };
  if (!isPlain(queue, merged)) return queue.add(name, data, opts);
  const job = new Job(queue, name, data, merged, merged.jobId);
  const stored = job.asJSON();
  const client = (await queue.client) as unknown as RedisClient;
  const { wait, paused, meta, events, marker } = queue.keys;
  const added = await addPlainJobInPass(
    client,
    [wait ?? "", paused ?? "", meta ?? "", events ?? "", marker ?? ""],
    {
      key: queue.toKey(merged.jobId),
      args: [
        merged.jobId,
        stored.name,
        stored.data,
        JSON.stringify(stored.opts),
        String(stored.timestamp),
      ],
    },
  );
  if (added === AddPlainJobReply.notPlain) return queue.add(name, data, opts);
  queue.emit("waiting", job);
  return job;
}
