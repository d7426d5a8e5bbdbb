import type { BenchSession, Harness } from "../harness.js";
import { openSession, runBatch } from "../harness.js";
import type { LoopBounds, Step } from "../loop.js";
import { sampleInterleaved } from "../loop.js";
import type { RawClient } from "../rawBullmq.js";
import { rawJobData } from "../rawBullmq.js";
import { type Summary, summarize } from "../stats.js";
import { NOOP_TOOL } from "../tools.js";

/** Latencies of one no-op call by each path. */
export interface CallLatency {
  /** Yiem's remote path: events, a tool worker process, the result message persisted. */
  remote: Summary;
  /** Plain BullMQ: `queue.add` → `waitUntilFinished`, a plain worker process. */
  raw: Summary;
  /** Yiem's pipeline with the default in-process executor, events and persistence included. */
  inProcess: Summary;
  /** The pipeline alone: in-process executor, no-op emit, nothing persisted. */
  inProcessBare: Summary;
  /** What-if: the remote call with its events sent without waiting for Redis's reply. */
  remoteEventsNotAwaited: Summary;
}

const noEmit = () => undefined;

/** One remote no-op call through `executeToolCalls` + `createRemoteExecutor`, persisted. */
export function remoteCallStep(h: Harness, session: BenchSession): Step {
  return async () => {
    await runBatch(h, session, NOOP_TOOL, 1, { executor: session.remote });
    return undefined;
  };
}

/** One raw BullMQ job of the same payload size, awaited with `waitUntilFinished`. */
export function rawCallStep(raw: RawClient, sessionId: string): Step {
  let n = 0;
  return async () => {
    await raw.call(NOOP_TOOL, rawJobData(sessionId, "r0000000", ++n));
    return undefined;
  };
}

/**
 * Samples the single-call latency of the four paths in alternating blocks, one worker
 * process of each kind serving.
 */
export async function measureCallLatency(
  h: Harness,
  raw: RawClient,
  bounds: { warmup: LoopBounds; samples: LoopBounds; rounds: number },
): Promise<CallLatency> {
  const remoteSession = await openSession(h, "remote");
  const localSession = await openSession(h, "local");
  const bareSession = await openSession(h, "bare");
  const unawaitedSession = await openSession(h, "unawaited");
  const samples = await sampleInterleaved(
    {
      remote: remoteCallStep(h, remoteSession),
      remoteEventsNotAwaited: async () => {
        await runBatch(h, unawaitedSession, NOOP_TOOL, 1, {
          executor: unawaitedSession.remote,
          emit: (event) => {
            void Promise.resolve(unawaitedSession.emit(event)).catch(() => undefined);
          },
        });
        return undefined;
      },
      raw: rawCallStep(raw, "bench-remote"),
      inProcess: async () => {
        await runBatch(h, localSession, NOOP_TOOL, 1, { executor: undefined });
        return undefined;
      },
      inProcessBare: async () => {
        await runBatch(h, bareSession, NOOP_TOOL, 1, {
          executor: undefined,
          emit: noEmit,
          persist: false,
        });
        return undefined;
      },
    },
    bounds,
  );
  return {
    remote: summarize(samples.remote ?? []),
    raw: summarize(samples.raw ?? []),
    inProcess: summarize(samples.inProcess ?? []),
    inProcessBare: summarize(samples.inProcessBare ?? []),
    remoteEventsNotAwaited: summarize(samples.remoteEventsNotAwaited ?? []),
  };
}
