import { type JobEnd, ResultWaiter } from "@yiem/core";
import type { Queue } from "bullmq";
import { monotonicMs } from "./clock.js";

/** When a traced job was handed to the waiter, added to its queue, and seen finished. */
export interface JobMarks {
  dispatch: number;
  added?: number;
  result?: number;
}

/**
 * Yiem's `ResultWaiter` that can also note, per job, when the remote executor started waiting
 * (just before `queue.add`), when the add returned (`startPolling`) and when the job's end
 * arrived (monotonic clock). While `tracing` is off it only adds one promise step per call.
 * The harness uses it as its one waiter, so traced calls have the same single `QueueEvents`
 * reader as every other call.
 */
export class TracingWaiter extends ResultWaiter {
  tracing = false;
  readonly marks = new Map<string, JobMarks>();

  override wait(queue: Queue, jobId: string): Promise<JobEnd> {
    if (this.tracing) this.marks.set(jobId, { dispatch: monotonicMs() });
    return super.wait(queue, jobId).then((end) => {
      const mark = this.marks.get(jobId);
      if (mark) mark.result = monotonicMs();
      return end;
    });
  }

  override startPolling(jobId: string): void {
    const mark = this.marks.get(jobId);
    if (mark) mark.added = monotonicMs();
    super.startPolling(jobId);
  }

  /** The marks of a job, forgotten once read. */
  take(jobId: string): JobMarks | undefined {
    const mark = this.marks.get(jobId);
    this.marks.delete(jobId);
    return mark;
  }
}
