/**
 * How long finished jobs of every Yiem queue are kept (BullMQ's `removeOnComplete` and
 * `removeOnFail`): request and decision jobs of the coordinator queue, for Bull Board and
 * `waitUntilFinished`; tool jobs, for Bull Board and for a coordinator that attaches to a call
 * after a crash. A completed job stays 1 h, a failed one 24 h, at most 10 000 of each.
 *
 * @example await queue.add("request", data, { jobId: runId, ...JOB_RETENTION })
 */
export const JOB_RETENTION = {
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600, count: 10_000 },
} as const;
