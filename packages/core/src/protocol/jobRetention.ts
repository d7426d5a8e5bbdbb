/**
 * How long finished jobs of every Yiem queue are kept (BullMQ's `removeOnComplete` and
 * `removeOnFail`): request and decision jobs of the coordinator queue, for Bull Board and
 * `waitUntilFinished`. A completed job stays 1 h, a failed one 24 h, at most 10 000 of each.
 * Tool jobs keep theirs as `toolJobRetention` says.
 *
 * @example await queue.add("request", data, { jobId: runId, ...JOB_RETENTION })
 */
export const JOB_RETENTION = {
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600, count: 10_000 },
} as const;

/**
 * How long a tool job's finished marker (`toolDone:<jobId>`) lives: 1 h with a result, 24 h
 * without (a failed job's), whether or not the job itself is kept (`toolJobRetention`). A
 * resumed run reads the marker, not the job, so a call whose job was removed is not run again.
 */
export const TOOL_DONE_TTL_S = {
  withResult: JOB_RETENTION.removeOnComplete.age,
  withoutResult: JOB_RETENTION.removeOnFail.age,
} as const;

/**
 * The retention of tool jobs (`YIEM_TOOL_JOB_RETENTION_S`): a completed one stays `completedS`
 * seconds (at most 10 000 per queue), or with 0 is removed as it completes (BullMQ then neither
 * adds it to the completed set nor prunes that set: 5 commands fewer a job, one `DEL` more);
 * a failed one stays 24 h either way, for Bull Board and its retry button.
 *
 * @example await queue.add(name, data, { jobId, ...toolJobRetention(0) })
 */
export function toolJobRetention(completedS: number) {
  return {
    removeOnComplete:
      completedS > 0 ? { age: completedS, count: JOB_RETENTION.removeOnComplete.count } : true,
    removeOnFail: JOB_RETENTION.removeOnFail,
  };
}
