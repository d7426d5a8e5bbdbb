import { array2obj, type RedisClient as BullClient, type JobJsonRaw, type Worker } from "bullmq";
import type { RedisClient } from "./redisConnection.js";
import { TakeJobReply } from "./scriptReplies.js";
import { withScripts } from "./scripts.js";

/** A job a lean take moved to active: its hash as BullMQ's take gives it, its id, its lock. */
export interface TakenJob {
  jobData: JobJsonRaw;
  jobId: string;
  /** The job's lock token: the take's for the first job, `<token>/<n>` for the n-th after it. */
  token: string;
  /** The value the take proposed for its claimed field (`TakeClaim`), if it claimed one. */
  proposed?: string | undefined;
}

/** What a lean take answered: BullMQ's reply to its take, and whether jobs still wait. */
export interface LeanTake {
  /** The job's hash, as BullMQ's `Scripts.moveToActive` gives it; `undefined`: none taken. */
  jobData: JobJsonRaw | undefined;
  jobId: string | undefined;
  /** The next delayed job's time, ms, when no job waits (BullMQ's `delayUntil`); else 0. */
  delayUntil: number;
  /** Jobs still wait (wait or prioritized): the queue's marker was added for them. */
  more: boolean;
  /** The jobs taken after the first (a take of `count` above one), in queue order. */
  further: TakenJob[];
}

/**
 * A field of each job's hash the take claims (`takeJob-8.lua`): a job whose hash lacks it, and
 * whose data names no `sessionId`, gets the value proposed for it (the n-th job taken, the
 * n-th value), written with the take; the hash given back holds the field either way.
 */
export interface TakeClaim {
  field: string;
  /** One new random value per job the take may take, in order. */
  proposed: string[];
}

/**
 * Takes the next job of `worker`'s queue for lock token `token` in one Yiem script
 * (`takeJob-8.lua`): what BullMQ's `moveToActive` does on a plain queue (the job to active, its
 * lock, the `active` event, `processedOn`, `pb` = `name`, `ats` + 1, the reply BullMQ's
 * `nextJobFromJobData` reads), but the queue's marker is added only when jobs still wait, and
 * the answer says whether they do. With `count` above one it takes up to that many jobs in the
 * same script, each further one locked with its own token (`TakenJob.token`). Resolves
 * `undefined`, having changed nothing, where BullMQ's take must run: a worker with a `limiter`,
 * or an empty `name`, or a queue that is paused, has a global concurrency or rate limit, or a
 * delayed job due (the script finds those). With `claim`, each job taken claims its field
 * (`TakeClaim`) in the same script.
 *
 * @example const taken = await takeJobLean(worker, client, token, worker.opts.name);
 */
export async function takeJobLean(
  worker: Worker,
  client: BullClient,
  token: string,
  name?: string,
  count = 1,
  claim?: TakeClaim,
): Promise<LeanTake | undefined> {
  if (worker.opts.limiter || name === "") return undefined;
  const k = worker.keys;
  const reply = await withScripts(client as unknown as RedisClient).yiemTakeJob(
    ...([k.wait, k.active, k.prioritized, k.events, k.delayed, k.meta, k.pc, k.marker] as string[]),
    worker.toKey(""),
    Date.now(),
    token,
    worker.opts.lockDuration ?? 30_000,
    name ?? "",
    count,
    ...(claim ? [claim.field, ...claim.proposed] : []),
  );
  if (typeof reply === "number") {
    if (reply === TakeJobReply.notPlain) return undefined;
    throw new Error(`takeJob: unexpected reply ${reply}`);
  }
  const [hash, jobId, , delayUntil, more, further] = reply;
  return {
    jobData: hash ? (array2obj(hash) as unknown as JobJsonRaw) : undefined,
    jobId: jobId ? String(jobId) : undefined,
    delayUntil: Number(delayUntil) || 0,
    more: more === 1,
    further: furtherJobs(further ?? [], token),
  };
}

/** The jobs of a take's `further` list (hash, id, ...), the n-th locked with `<token>/<n>`. */
function furtherJobs(further: Array<string[] | string>, token: string): TakenJob[] {
  const jobs: TakenJob[] = [];
  for (let i = 0; i + 1 < further.length; i += 2) {
    jobs.push({
      jobData: array2obj(further[i] as string[]) as unknown as JobJsonRaw,
      jobId: String(further[i + 1]),
      token: `${token}/${jobs.length + 1}`,
    });
  }
  return jobs;
}
