import type { RedisClient as BullClient, Job, Span } from "bullmq";
import { completeJobLean, type JobEndRecord, recordJobEndApart } from "../redis/leanCompletion.js";
import type { RedisClient } from "../redis/redisConnection.js";
import { SafeTakeWorker } from "../redis/safeTakeWorker.js";

/** The part of BullMQ's `Worker` state this subclass reads (private there, not typed). */
interface WorkerInternals {
  /** Set while the worker blocks for a job marker and takes the job the marker announced. */
  waiting: Promise<number> | null | undefined;
}

/**
 * A BullMQ `Worker` that starts a job as soon as it has taken it.
 *
 * BullMQ's main loop (concurrency above one) takes jobs one `moveToActive` round trip after
 * another, and starts the first only once it holds `concurrency` jobs or a take comes back
 * empty: with a backlog, the first job waits for `concurrency - 1` more round trips, and a job
 * taken outside a marker wait waits for one empty take. Here the take that follows a
 * successful one answers "none" at once, without asking Redis, so the loop starts the job it
 * holds and asks Redis again on its next pass, while that job runs. On the benchmark's single
 * remote call (a worker of concurrency 16 and one coordinator taking turns) this took the
 * median from 1.27–1.45 to 1.19–1.29 times plain BullMQ's, in alternating runs on one machine
 * (docs/PERFORMANCE.md).
 *
 * With `fetchOnFinish` false, finishing a job takes no next one in the same script (BullMQ's
 * fetch on finish): the loop takes the next job itself (`moveToActive`), from a backlog at
 * once, else after a job marker. Tool queues are mostly empty when a job finishes (the worker
 * already waits for a marker), and a fetch that finds nothing ran 6 commands in the job's
 * `moveToFinished`, 12 a run of two calls; a fetch that finds one saves one script call. Not
 * on a queue with a global concurrency: there a job waiting for a free slot is announced by
 * no marker, and only the finish that frees the slot takes it at once (without it, a worker
 * would take it when its wait for a marker times out, `drainDelay`).
 *
 * Without a fetch on finish, a job completes in one Yiem script (`completeJobLean`: some 10
 * commands where BullMQ's `moveToFinished` runs 19), with the end record its processor left
 * (`endRecordOf`: a tool job's finished marker and announcement) in the same step; a job that
 * is not plain, or whose finish must prune old jobs, completes through BullMQ as before.
 *
 * Takes lean (`takesLean`, see `SafeTakeWorker`): a take that leaves no job waiting adds no
 * marker and marks the worker drained, so after it the loop's next pass blocks on the queue's
 * marker (`BZPOPMIN`, no take skipped then) where BullMQ's takes again and finds nothing: one
 * job costs one take, not three (BullMQ's marker after every take woke the loop's blocked
 * take too). A take that leaves jobs waiting adds the marker, as BullMQ's does, and the
 * skipped take above applies: the next pass takes one of them. A limited tool's queue is not
 * plain: there `takesLean` is false and BullMQ takes.
 *
 * Takes up to `takeAtOnce` jobs at once, no more than it has free slots for (`takeCount`,
 * see `SafeTakeWorker`): the parallel calls of one model turn, added together, go to one
 * worker in one take (5 commands each after the first) where each took a take of its own and
 * woke another worker, which then raced this one for them. So a run of two calls costs one
 * take and one woken worker, not two and two. A larger burst still wakes the other workers for
 * the jobs it leaves (the marker stays while jobs wait).
 *
 * Never skips the take that follows a wait for a job marker (that marker is spent, and only
 * that take moves the job it announced), and never drops a job: a skipped take moves nothing,
 * and the loop's next pass takes again. With `concurrency` 1 it takes as `Worker` does, lean.
 *
 * @example
 * const worker = new EagerWorker("tools-default", processor, { connection, concurrency: 16 });
 */
export class EagerWorker<DataType, ResultType> extends SafeTakeWorker<DataType, ResultType> {
  /** Whether the next take may answer "none" at once (the previous one took a job). */
  private startTakenFirst = false;

  /** Takes lean (see `SafeTakeWorker`); set it false on a queue that is not plain. */
  override takesLean = true;

  /**
   * The most jobs one take takes (`WORKER_TAKE_AT_ONCE`): a model turn's parallel calls (mostly
   * one to four) go to one worker together, while a larger burst is shared with the other
   * workers. `1`: each job is taken alone, so a turn's calls spread over idle workers.
   */
  takeAtOnce = 1;

  /** As many jobs as the worker has free slots for, at most `takeAtOnce`, at least one. */
  protected override takeCount(): number {
    const free = this.concurrency - this.lockManager.getActiveJobCount();
    return Math.max(1, Math.min(this.takeAtOnce, free));
  }

  /**
   * Whether finishing a job takes the next one in the same script, as BullMQ's `Worker` does
   * (default); set it false on a queue without a global concurrency (see above).
   */
  fetchOnFinish = true;

  /**
   * The end record to write as job `job` completes (its processor's doing), if any: in the
   * completing script, or just ahead of BullMQ's completion.
   */
  endRecordOf: (job: Job<DataType, ResultType>) => JobEndRecord | undefined = () => undefined;

  protected override async moveToActive(
    client: BullClient,
    token: string,
    name?: string,
  ): Promise<Job<DataType, ResultType>> {
    const blocking = Boolean((this as unknown as WorkerInternals).waiting);
    if (this.startTakenFirst && !blocking) {
      this.startTakenFirst = false;
      return undefined as unknown as Job<DataType, ResultType>; // BullMQ's own "no job"
    }
    const job = await super.moveToActive(client, token, name);
    // A take that left no job waiting marked the worker drained: its next take blocks.
    this.startTakenFirst = Boolean(job) && this.concurrency > 1 && this.jobsLeft !== false;
    return job;
  }

  protected override async handleCompleted(
    result: ResultType,
    job: Job<DataType, ResultType>,
    token: string,
    fetchNext?: () => boolean,
    span?: Span,
  ): Promise<Job<DataType, ResultType>> {
    const end = this.endRecordOf(job);
    if (!this.fetchOnFinish && !this.connection.closing) {
      if ((await completeJobLean(this, job, token, result, { end, taken: true })) === "completed") {
        this.emit("completed", job, result, "active");
        return undefined as unknown as Job<DataType, ResultType>; // no next job taken
      }
    } else if (end) {
      recordJobEndApart((await this.client) as unknown as RedisClient, end).catch((err: Error) =>
        this.emit("error", err),
      );
    }
    return super.handleCompleted(
      result,
      job,
      token,
      this.fetchOnFinish ? fetchNext : noFetch,
      span,
    );
  }

  protected override handleFailed(
    err: Error,
    job: Job<DataType, ResultType>,
    token: string,
    fetchNext?: () => boolean,
    span?: Span,
  ): Promise<Job<DataType, ResultType>> {
    return super.handleFailed(err, job, token, this.fetchOnFinish ? fetchNext : noFetch, span);
  }
}

/** Finishing a job takes no next one (`EagerWorker.fetchOnFinish` false). */
const noFetch = (): boolean => false;
