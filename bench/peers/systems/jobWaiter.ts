/**
 * Waits for BullMQ jobs by id through one `QueueEvents` reader (Yiem's coordinator queue and
 * the hand-written BullMQ orchestrator's queue alike).
 */
import type { QueueEvents } from "bullmq";

/** Resolves a job's promise with its return value when it completes, rejects when it fails. */
export interface JobWaiter {
  /** Registers `jobId` before it is added; resolves with its return value. */
  waitFor(jobId: string): Promise<unknown>;
  stop(): void;
}

/** Listens to `events` from now on. */
export function startJobWaiter(events: QueueEvents): JobWaiter {
  const open = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
    open.get(jobId)?.resolve(returnvalue);
    open.delete(jobId);
  };
  const onFailed = ({ jobId, failedReason }: { jobId: string; failedReason: string }) => {
    open.get(jobId)?.reject(new Error(`job ${jobId} failed: ${failedReason}`));
    open.delete(jobId);
  };
  events.on("completed", onCompleted);
  events.on("failed", onFailed);
  return {
    waitFor: (jobId) => new Promise((resolve, reject) => open.set(jobId, { resolve, reject })),
    stop() {
      events.off("completed", onCompleted);
      events.off("failed", onFailed);
    },
  };
}
