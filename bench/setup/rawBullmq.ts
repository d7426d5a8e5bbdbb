import type { RedisClient, ToolJobData, ToolJobResult } from "@yiem/core";
import { JOB_RETENTION } from "@yiem/core/internal";
import { Queue, QueueEvents } from "bullmq";
import { monotonicMs } from "../sampling/clock.js";

/** The queue of the raw BullMQ baseline (beside Yiem's `tools-default`, same BullMQ prefix). */
export const RAW_QUEUE = "bench-raw";
/** Job name of raw jobs whose processor reports when it ran. */
export const RAW_TRACED_JOB = "traced";

/** Calls each worker process runs at once, Yiem and raw alike (`startToolWorker`'s default). */
export const WORKER_CONCURRENCY = 16;

/**
 * The payload of a raw job: the same shape, keys and value lengths as the `ToolJobData` Yiem
 * sends for a no-op call, so both carry the same bytes.
 */
export function rawJobData(sessionId: string, runId: string, n: number): ToolJobData {
  return {
    sessionId,
    runId,
    toolCallId: `call_${n}`,
    toolName: "noop",
    args: {},
    retries: 0,
  };
}

/** What the raw processor returns: the same shape and size as a Yiem worker's no-op result. */
export function rawResult(workerId: string): ToolJobResult {
  return {
    result: { content: [{ type: "text", text: "ok" }], details: {} },
    isError: false,
    workerId,
    durationMs: 0,
  };
}

/** A raw result that also says when the processor ran (breakdowns). */
export function rawTracedResult(workerId: string): ToolJobResult {
  const result = rawResult(workerId);
  return { ...result, result: { ...result.result, details: { execAtMs: monotonicMs() } } };
}

/** The producer side of the baseline: a queue and the `QueueEvents` reader results come from. */
export interface RawClient {
  queue: Queue;
  events: QueueEvents;
  /** Adds one job and resolves with its return value (`waitUntilFinished`, 10 s ttl). */
  call(name: string, data: ToolJobData): Promise<ToolJobResult>;
  close(): Promise<void>;
}

/**
 * Opens the baseline's producer on `connection` (shared like the coordinator's queue
 * connection) with its own `QueueEvents` connection, as a plain BullMQ user would.
 */
export async function openRawClient(
  connection: RedisClient,
  bullPrefix: string,
): Promise<RawClient> {
  const queue = new Queue<ToolJobData, ToolJobResult>(RAW_QUEUE, {
    connection,
    prefix: bullPrefix,
  });
  queue.setMaxListeners(0); // waitUntilFinished adds a 'closing' listener per waiting job
  const events = new QueueEvents(RAW_QUEUE, { connection, prefix: bullPrefix });
  events.setMaxListeners(0);
  events.on("error", () => undefined);
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  return {
    queue,
    events,
    async call(name, data) {
      const job = await queue.add(name, data, { attempts: 1, ...JOB_RETENTION });
      return (await job.waitUntilFinished(events, 10_000)) as ToolJobResult;
    },
    async close() {
      await events.close();
      await queue.close();
    },
  };
}
