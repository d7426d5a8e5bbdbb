import type { LoopBounds, Step } from "../sampling/loop.js";
import { sampleInterleaved } from "../sampling/loop.js";
import { type Summary, summarize } from "../sampling/stats.js";
import type { BenchSession, Harness } from "../setup/harness.js";
import { openSession, runBatch } from "../setup/harness.js";
import type { RawClient } from "../setup/rawBullmq.js";
import { rawJobData } from "../setup/rawBullmq.js";
import { NOOP_TOOL } from "../setup/tools.js";

/** Latencies of one no-op call by each path. */
export interface CallLatency {
  /**
   * Yiem's remote path as the coordinator runs it: events sent without awaiting each reply,
   * a tool worker process, the result message appended (`SessionStore.appendMany`) without
   * waiting for the reply (the session's next write waits for it, sent right behind it).
   */
  remote: Summary;
  /** Plain BullMQ: `queue.add` → `waitUntilFinished`, a plain worker process. */
  raw: Summary;
  /** Yiem's pipeline with the default in-process executor, events and persistence included. */
  inProcess: Summary;
  /** The pipeline alone: in-process executor, no-op emit, nothing persisted. */
  inProcessBare: Summary;
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
 * Samples the single-call latency of the four cases in alternating blocks, one worker
 * process of each kind serving. One remote and one raw block per round: a case added to one
 * side only changes the other side's neighbours and the ratio (see PERFORMANCE's Method).
 */
export async function measureCallLatency(
  h: Harness,
  raw: RawClient,
  bounds: { warmup: LoopBounds; samples: LoopBounds; rounds: number },
): Promise<CallLatency> {
  const remoteSession = await openSession(h, "remote");
  const localSession = await openSession(h, "local");
  const bareSession = await openSession(h, "bare");
  const samples = await sampleInterleaved(
    {
      remote: remoteCallStep(h, remoteSession),
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
  await Promise.all([remoteSession, localSession].map((s) => s.transcript.settle()));
  return {
    remote: summarize(samples.remote ?? []),
    raw: summarize(samples.raw ?? []),
    inProcess: summarize(samples.inProcess ?? []),
    inProcessBare: summarize(samples.inProcessBare ?? []),
  };
}
