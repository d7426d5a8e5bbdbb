import { type JobEnd, ResultWaiter } from "@yiem/core/internal";
import type { Queue } from "bullmq";
import { monotonicMs } from "../sampling/clock.js";

/** When a traced job was handed to the waiter, added to its queue, and seen finished. */
export interface JobMarks {
  dispatch: number;
  added?: number;
  result?: number;
}

/**
 * Yiem's `ResultWaiter` that can also note, per job, when the remote executor started waiting
 * (just before `queue.add`), when the add returned and when the job's end arrived (monotonic
 * clock). While `tracing` is off it adds nothing. The harness uses it as its one waiter, so
 * traced calls have the same subscription to announced job ends as every other call.
 */
export class TracingWaiter extends ResultWaiter {
  tracing = false;
  readonly marks = new Map<string, JobMarks>();

  override waitForJobEnd(
    queue: Queue,
    jobId: string,
    add: () => Promise<unknown>,
    signal?: AbortSignal,
  ): Promise<JobEnd> {
    if (!this.tracing) return super.waitForJobEnd(queue, jobId, add, signal);
    const mark: JobMarks = { dispatch: monotonicMs() };
    this.marks.set(jobId, mark);
    const addAndMark = async () => {
      await add();
      mark.added = monotonicMs();
    };
    return super.waitForJobEnd(queue, jobId, addAndMark, signal).then((end) => {
      mark.result = monotonicMs();
      return end;
    });
  }

  /** The marks of a job, forgotten once read. */
  take(jobId: string): JobMarks | undefined {
    const mark = this.marks.get(jobId);
    this.marks.delete(jobId);
    return mark;
  }
}
