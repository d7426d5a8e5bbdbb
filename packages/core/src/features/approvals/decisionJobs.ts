import { type Job, UnrecoverableError, type Worker, type WorkerOptions } from "bullmq";
import type { Logger } from "../../ops/logger.js";
import type { ClusterKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redisConnection.js";
import { isConnectionError } from "../../redis/redisErrors.js";
import { retryTransient } from "../../redis/retryTransient.js";
import { SafeTakeWorker } from "../../redis/safeTakeWorker.js";
import { type DecisionDeps, recordDecision } from "./approvalDecisions.js";
import { type DecisionJobResult, type DecisionRequest, readDecisionJob } from "./protocol.js";

/** What consuming the decisions queue needs. */
export interface DecisionJobsOptions {
  /** The coordinator's connection (BullMQ duplicates it for its blocking reads). */
  connection: RedisClient;
  keys: ClusterKeys;
  decisions: DecisionDeps;
  log: Logger;
  /** BullMQ settings shared with the coordinator queue: lock, stall check, retention, name. */
  worker: Pick<
    WorkerOptions,
    | "lockDuration"
    | "stalledInterval"
    | "maxStalledCount"
    | "removeOnComplete"
    | "removeOnFail"
    | "name"
  >;
}

/** Decisions one coordinator records at once (each is one short script). */
const DECISION_CONCURRENCY = 8;

/**
 * Records one decision job: validates it, records the decision at most once
 * (`recordDecision`, which resumes the run when its batch is decided) and returns
 * `DecisionJobResult`. Fails the job unrecoverably with `invalid decision: <field>: …` or
 * `no-op: …` (the call no longer waits, or was decided already); Redis errors are retried.
 */
async function recordDecisionJob(
  options: DecisionJobsOptions,
  job: Job,
): Promise<DecisionJobResult> {
  let request: DecisionRequest;
  try {
    request = readDecisionJob(job.data);
  } catch (err) {
    options.log.info({ jobId: job.id, err: (err as Error).message }, "refused a decision job");
    throw new UnrecoverableError(`invalid decision: ${(err as Error).message}`);
  }
  const known = await retryTransient(() =>
    options.decisions.approvals.requestOf(request.sessionId, request.callKey),
  );
  if (known?.child)
    throw new UnrecoverableError(
      `no-op: call ${request.callKey} of session ${request.sessionId} waits for a child run of agent "${known.child.agent}", not for approval`,
    );
  const outcome = await retryTransient(() =>
    recordDecision(options.decisions, request, Date.now(), known),
  );
  if (!outcome.ok) throw new UnrecoverableError(outcome.reason);
  return outcome.result;
}

/**
 * Starts consuming the decisions queue (`keys.decisionsQueue`): the only way a person's
 * approval or denial reaches a call awaiting approval, kept apart from the coordinator queue
 * so that a Redis ACL can let a user add requests without letting it decide (the approver
 * role, `docs/SECURITY.md`). Close the returned worker to stop.
 */
export function startDecisionJobs(options: DecisionJobsOptions): Worker {
  const { keys, log } = options;
  const worker = new SafeTakeWorker(keys.decisionsQueue, (job) => recordDecisionJob(options, job), {
    connection: options.connection,
    prefix: keys.bullPrefix,
    concurrency: DECISION_CONCURRENCY,
    drainDelay: 1, // an idle fetch blocks at most 1 s, so closing is prompt
    ...options.worker,
  });
  worker.onHandedBack = (jobIds) =>
    log.warn({ jobs: jobIds }, "handed back the decisions a take lost with its reply");
  // Outages are logged once by the Redis watch; BullMQ repeats them on every retry.
  worker.on("error", (err) =>
    log[isConnectionError(err) ? "debug" : "warn"]({ err: err.message }, "decisions queue error"),
  );
  return worker;
}
