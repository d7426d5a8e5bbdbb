import type { Job } from "bullmq";
import type { Logger } from "../ops/logger.js";
import { TOOL_DONE_TTL_S } from "../protocol/jobRetention.js";
import { type ToolJobEnd, toolJobEndMessage } from "../protocol/toolJobEnds.js";
import type { ToolJobData, ToolJobResult } from "../protocol/toolJobs.js";
import type { ClusterKeys } from "../redis/keys.js";
import type { JobEndRecord } from "../redis/leanCompletion.js";
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
 * (`recordToolEnd-1.lua`): a write Redis refuses is announced to no one. For a job BullMQ
 * fails (aborted, refused); a completing one records its end as it completes
 * (`completeWithEnd`). Not awaited: it goes
 * out on the connection BullMQ then completes or fails the job on, so Redis stores the marker
 * before the job is finished. Never throws; a failure is logged.
 */
export function recordJobEnd(sink: JobEndSink, job: Job<ToolJobData>, end: ToolJobEnd): void {
  const jobId = job.id ?? "";
  const completed = end.kind === "completed";
  withScripts(sink.command)
    .yiemRecordToolEnd(
      sink.keys.toolDone(job.queueName, jobId),
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

/** The end records of the jobs whose processor returned, until they complete. */
const endRecords = new WeakMap<Job<ToolJobData>, JobEndRecord>();

/**
 * The end record tool job `job` completes with (`EagerWorker.endRecordOf`): its finished
 * marker and announcement, written in the completing script. `undefined`: none, or it was
 * written apart (`completeWithEnd`).
 */
export function endRecordOf(job: Job<ToolJobData>): JobEndRecord | undefined {
  return endRecords.get(job);
}

/**
 * Leaves tool job `job`'s end (completed with `value`) to be written as it completes, in the
 * same script (`EagerWorker`): the marker with the result, unless `markerStored` (an earlier
 * attempt's, or one written already), and the announcement (the marker's key is in the job's
 * hash slot: one script on a Redis Cluster too). Never throws.
 */
export function completeWithEnd(
  sink: JobEndSink,
  job: Job<ToolJobData>,
  value: ToolJobResult,
  markerStored: boolean,
): void {
  const jobId = job.id ?? "";
  const markerKey = sink.keys.toolDone(job.queueName, jobId);
  const end: ToolJobEnd = { kind: "completed", value };
  endRecords.set(job, {
    markerKey,
    marker: markerStored ? undefined : JSON.stringify(value),
    markerTtlS: markerTtlS(true),
    channel: sink.keys.toolEndsChannel(job.queueName),
    message: toolJobEndMessage(jobId, end),
  });
}
