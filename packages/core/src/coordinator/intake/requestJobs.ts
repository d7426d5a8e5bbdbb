import { type Job, UnrecoverableError } from "bullmq";
import type { UserInputLimits } from "../../agent/toUserMessage.js";
import type { Logger } from "../../ops/logger.js";
import { isDecisionJob, readDecisionJob } from "../../protocol/coordinatorDecision.js";
import {
  type CoordinatorJobResult,
  type CoordinatorRequest,
  readCoordinatorJob,
  sessionIdForJob,
} from "../../protocol/coordinatorJob.js";
import { anyError, retryTransient } from "../../redis/retryTransient.js";
import { inputOrder } from "../../state/inputOrder.js";
import type { ResponseWait, ResponseWaits } from "../../state/responseWaits.js";
import type { EnqueueOutcome, SessionStore } from "../../state/sessionStore.js";
import type { SessionTasks } from "../run/sessionTasks.js";
import { type DecisionDeps, recordDecision } from "./approvalDecisions.js";
import type { JobLocks } from "./jobLocks.js";
import type { Slot } from "./runSlots.js";

/** What handling coordinator-queue jobs (requests and decisions) needs. */
export interface RequestJobsOptions {
  store: SessionStore;
  tasks: SessionTasks;
  answers: ResponseWaits;
  locks: JobLocks;
  limits: UserInputLimits;
  log: Logger;
  /** Records approval decisions (`{ decision: … }` jobs). */
  decisions: DecisionDeps;
}

/** Why a job in hand was let go without an answer. */
class JobLetGoError extends Error {
  constructor(readonly why: "lockLost" | "closing") {
    super(why === "lockLost" ? "the job's lock was lost" : "the coordinator is closing");
  }
}

type OrderedRequest = CoordinatorRequest & { order: number };

/** Tries at recording a decision and completing its job (about 6 s of pauses in all). */
const DECISION_ATTEMPTS = 8;

/** Tries at failing an invalid job (under 1 s of pauses in all). */
const REFUSE_ATTEMPTS = 5;

/** A request job held until its run answers it. */
interface InHand {
  job: Job;
  token: string;
  wait: ResponseWait;
  done: Promise<void>;
}

/**
 * What this coordinator does with the jobs it fetches from the coordinator queue, and the
 * request jobs it holds. A request job is validated (a bad one fails at once, unrecoverably,
 * naming the field), its input recorded for its session exactly once however often the job is
 * delivered, then held, without a run slot, until the run that answers it stores its
 * response; the job then completes with `{ sessionId, runId, response }`. A decision job
 * (`{ decision }`) is recorded and completed at once. Errors while recording or completing
 * are retried (a request's while its lock is kept); a closing coordinator hands its request
 * jobs back to the queue.
 */
export class RequestJobs {
  private readonly inHand = new Map<string, InHand>();

  constructor(private readonly options: RequestJobsOptions) {}

  /** Handles a job fetched with `token`; `slot` is the run slot taken for it. Never throws. */
  handle(job: Job, token: string, slot: Slot): Promise<void> {
    if (isDecisionJob(job.data)) {
      slot.release(); // a decision runs nothing here: a resumed run takes a slot of its own
      return this.decide(job, token);
    }
    let request: CoordinatorRequest;
    try {
      request = readCoordinatorJob(job.data, this.options.limits);
    } catch (err) {
      slot.release();
      return this.refuse(job, token, err);
    }
    const jobId = job.id ?? "";
    const sessionId = request.sessionId ?? sessionIdForJob(jobId, job.timestamp);
    const order = inputOrder(job.timestamp);
    const wait = this.options.answers.wait(jobId, { sessionId });
    const entry = { job, token, wait } as InHand;
    this.inHand.set(jobId, entry);
    this.options.locks.track(jobId, token, () => wait.cancel(new JobLetGoError("lockLost")));
    entry.done = this.answer(entry, sessionId, { ...request, order }, slot).finally(() => {
      this.options.locks.untrack(jobId);
      if (this.inHand.get(jobId) === entry) this.inHand.delete(jobId);
    });
    return entry.done;
  }

  /** Hands every held job back to the queue (for another coordinator) and waits for them. */
  async close(): Promise<void> {
    const held = [...this.inHand.values()];
    for (const entry of held) entry.wait.cancel(new JobLetGoError("closing"));
    await Promise.all(held.map((entry) => entry.done));
  }

  private async answer(
    entry: InHand,
    sessionId: string,
    request: OrderedRequest,
    slot: Slot,
  ): Promise<void> {
    const { job, token, wait } = entry;
    const runId = job.id ?? "";
    wait.promise.catch(() => undefined); // a cancelled wait is handled below
    try {
      const recorded = await this.record(entry, sessionId, runId, request);
      if (recorded.kind === "answered") {
        slot.release();
        wait.cancel(new JobLetGoError("closing"));
        return await this.complete(entry, { sessionId, runId, response: recorded.response });
      }
      await this.options.tasks.ensureRunning(sessionId, slot);
      const response = await wait.promise;
      await this.complete(entry, { sessionId, runId, response });
    } catch (err) {
      slot.release(); // a no-op when the session task took it
      if (!(err instanceof JobLetGoError)) throw err;
      if (err.why === "closing") await job.moveToWait(token).catch(() => undefined);
    }
  }

  /** Records the input, retrying any error until it is recorded or the job is let go. */
  private async record(
    entry: InHand,
    sessionId: string,
    runId: string,
    request: OrderedRequest,
  ): Promise<EnqueueOutcome> {
    const { store, log } = this.options;
    const letGo = new AbortController();
    entry.wait.promise.catch((err: unknown) => {
      if (err instanceof JobLetGoError) letGo.abort(err);
    });
    return retryTransient(
      () => store.enqueueInput(sessionId, runId, request.kind, request.message, request.order),
      {
        attempts: Number.POSITIVE_INFINITY,
        retryIf: anyError,
        signal: letGo.signal,
        onRetry: (err) =>
          log.warn(
            { sessionId, runId, err: (err as Error).message },
            "could not record an input; retrying",
          ),
      },
    );
  }

  /** Completes the job with its answer, retrying any error while the job is still ours. */
  private async complete(entry: InHand, result: CoordinatorJobResult): Promise<void> {
    const { log } = this.options;
    const { runId } = result;
    const movedOn = (err: unknown) =>
      !this.inHand.has(runId) ||
      /lock|not in the active state|does not exist/i.test((err as Error).message);
    try {
      await retryTransient(() => entry.job.moveToCompleted(result, entry.token, false), {
        attempts: Number.POSITIVE_INFINITY,
        retryIf: (err) => !movedOn(err),
        onRetry: (err) =>
          log.warn(
            { runId, err: (err as Error).message },
            "could not complete a coordinator job; retrying",
          ),
      });
    } catch (err) {
      log.info(
        { runId, err: (err as Error).message },
        "a coordinator job moved on before it could complete",
      );
    }
  }

  /**
   * Records a decision job's decision: completes the job with `DecisionJobResult`, or fails
   * it unrecoverably with a `no-op: …` reason when the call no longer waits or was decided.
   */
  private async decide(job: Job, token: string): Promise<void> {
    let request: ReturnType<typeof readDecisionJob>;
    try {
      request = readDecisionJob(job.data);
    } catch (err) {
      return this.refuse(job, token, err);
    }
    const { log } = this.options;
    const warn = (err: unknown, what: string) =>
      log.warn({ jobId: job.id, err: (err as Error).message }, what);
    await retryTransient(
      async () => {
        const outcome = await recordDecision(this.options.decisions, request);
        if (outcome.ok) await job.moveToCompleted(outcome.result, token, false);
        else await job.moveToFailed(new UnrecoverableError(outcome.reason), token, false);
      },
      {
        attempts: DECISION_ATTEMPTS,
        retryIf: anyError,
        onRetry: (err) => warn(err, "could not record a decision; retrying"),
      },
    ).catch((err: unknown) =>
      // Its lock runs out unrenewed: the stalled check hands the job out again.
      warn(err, "could not record a decision; giving up until the job is handed out again"),
    );
  }

  private async refuse(job: Job, token: string, err: unknown): Promise<void> {
    const reason = `invalid request: ${(err as Error).message}`;
    this.options.log.info({ jobId: job.id, reason }, "refused a coordinator job");
    await retryTransient(() => job.moveToFailed(new UnrecoverableError(reason), token, false), {
      attempts: REFUSE_ATTEMPTS,
      retryIf: anyError,
    }).catch(() => undefined);
  }
}
