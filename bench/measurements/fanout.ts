import { type LoopBounds, type Step, sampleInterleaved } from "../sampling/loop.js";
import { type Summary, summarize } from "../sampling/stats.js";
import { type BenchSession, type Harness, openSession, runBatch } from "../setup/harness.js";
import { type RawClient, rawJobData } from "../setup/rawBullmq.js";
import { NOOP_TOOL } from "../setup/tools.js";

/** How many parallel calls one batch carries. */
export const FANOUT = 8;

/** Latency of a batch of `FANOUT` parallel no-op calls, Yiem's and the raw floor. */
export interface FanoutLatency {
  /**
   * Through Yiem's remote path as the coordinator runs it: events sent in order without
   * awaiting each reply (`createEventPublisher`), the results appended in one fenced script
   * (`SessionStore.appendMany`) without waiting for its reply.
   */
  remote: Summary;
  /** `FANOUT` raw BullMQ jobs added at once and awaited together (the floor). */
  raw: Summary;
}

function remoteStep(h: Harness, session: BenchSession): Step {
  return async () => {
    await runBatch(h, session, NOOP_TOOL, FANOUT, { executor: session.remote });
    return undefined;
  };
}

function rawStep(raw: RawClient): Step {
  let n = 0;
  return async () => {
    const jobs = Array.from({ length: FANOUT }, () =>
      raw.call(NOOP_TOOL, rawJobData("bench-fanout", "r0000000", ++n)),
    );
    await Promise.all(jobs);
    return undefined;
  };
}

/**
 * Samples a batch of eight parallel no-op calls, Yiem's and raw BullMQ's, in alternating blocks,
 * one block of each per round (a case added to one side only would change the ratio).
 */
export async function measureFanout(
  h: Harness,
  raw: RawClient,
  bounds: { warmup: LoopBounds; samples: LoopBounds; rounds: number },
): Promise<FanoutLatency> {
  const session = await openSession(h, "fanout");
  const samples = await sampleInterleaved(
    { remote: remoteStep(h, session), raw: rawStep(raw) },
    bounds,
  );
  await session.transcript.settle();
  return { remote: summarize(samples.remote ?? []), raw: summarize(samples.raw ?? []) };
}
