import type { Job } from "bullmq";
import type { Logger } from "../ops/logger.js";
import { TOOL_DONE_TTL_S } from "../protocol/jobRetention.js";
import { type ToolJobEnd, toolJobEndMessage } from "../protocol/toolJobEnds.js";
import type { ToolJobData } from "../protocol/toolJobs.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { withScripts } from "../redis/scripts.js";

/** What recording a job's end needs: the worker's command connection, keys and log. */
export interface JobEndSink {
  command: RedisClient;
  keys: ClusterKeys;
  log: Logger;
}

/**
 * How long a finished tool job's marker lives (`TOOL_DONE_TTL_S`): a marker with a result
 * belongs to a job that completes, 1 h (whether the job is kept that long, or removed as it
 * completes: `YIEM_TOOL_JOB_RETENTION_S`); one without, to a job that fails (aborted or
 * refused, kept 24 h). So a result is not kept in Redis a day longer than a run resumes in.
 */
export function markerTtlS(withResult: boolean): number {
  return withResult ? TOOL_DONE_TTL_S.withResult : TOOL_DONE_TTL_S.withoutResult;
}

/**
 * Records that tool job `job` ended (its finished marker, with the result when it completed)
 * and announces the end to the coordinators waiting for it, in one script
 * (`recordToolEnd-1.lua`): a write Redis refuses is announced to no one. Not awaited: it goes
 * out on the connection BullMQ then completes or fails the job on, so Redis stores the marker
 * before the job is finished. Never throws; a failure is logged.
 */
export function recordJobEnd(sink: JobEndSink, job: Job<ToolJobData>, end: ToolJobEnd): void {
  const jobId = job.id ?? "";
  const completed = end.kind === "completed";
  withScripts(sink.command)
    .yiemRecordToolEnd(
      sink.keys.toolDone(jobId),
      completed ? JSON.stringify(end.value) : "1",
      markerTtlS(completed),
      sink.keys.toolEndsChannel(job.queueName),
      toolJobEndMessage(jobId, end),
    )
    .catch((err: Error) =>
      sink.log.warn({ err: err.message, jobId }, "could not record a finished tool job"),
    );
}

/**
 * Announces how tool job `job` ended, for an end whose marker is already stored (a result an
 * earlier attempt recorded) or that has none (a failure outside the call). Not awaited, sent
 * ahead of BullMQ's completion on the same connection. A lost announcement costs only time: a
 * waiting coordinator also polls the job. Never throws; a failure is logged.
 */
export function announceJobEnd(sink: JobEndSink, job: Job<ToolJobData>, end: ToolJobEnd): void {
  sink.command
    .publish(sink.keys.toolEndsChannel(job.queueName), toolJobEndMessage(job.id ?? "", end))
    .catch((err: Error) =>
      sink.log.warn({ err: err.message, jobId: job.id }, "could not announce a tool job's end"),
    );
}
