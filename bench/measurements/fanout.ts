import type { EmitFn } from "@yiem/core";
import { type BenchSession, type Harness, openSession, runBatch } from "../harness.js";
import { type LoopBounds, type Step, sampleInterleaved } from "../loop.js";
import { type RawClient, rawJobData } from "../rawBullmq.js";
import { type Summary, summarize } from "../stats.js";
import { NOOP_TOOL } from "../tools.js";

/** How many parallel calls one batch carries. */
export const FANOUT = 8;

/** Latency of a batch of `FANOUT` parallel no-op calls. */
export interface FanoutLatency {
  /** Through Yiem's remote path, events and persistence included. */
  remote: Summary;
  /** `FANOUT` raw BullMQ jobs added at once and awaited together (context only). */
  raw: Summary;
  /**
   * What-if variants of the remote batch, to size proposed changes (same Redis work, fewer
   * round trips waited for one after another).
   */
  whatIf: {
    /** Events sent without waiting for Redis's reply (order kept by the one connection). */
    eventsNotAwaited: Summary;
    /** The eight result messages appended together instead of one after another. */
    appendsPipelined: Summary;
    /** Both. */
    both: Summary;
  };
}

/** An emitter that sends the event and returns at once (the connection keeps the order). */
function unawaited(session: BenchSession): EmitFn {
  return (event) => {
    void Promise.resolve(session.emit(event)).catch(() => undefined);
  };
}

function remoteStep(
  h: Harness,
  session: BenchSession,
  variant: { emit?: EmitFn; pipelineAppends?: boolean },
): Step {
  return async () => {
    await runBatch(h, session, NOOP_TOOL, FANOUT, { executor: session.remote, ...variant });
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

/** Samples a batch of eight parallel no-op calls, Yiem, raw and the what-ifs in alternating blocks. */
export async function measureFanout(
  h: Harness,
  raw: RawClient,
  bounds: { warmup: LoopBounds; samples: LoopBounds; rounds: number },
): Promise<FanoutLatency> {
  const session = await openSession(h, "fanout");
  const samples = await sampleInterleaved(
    {
      remote: remoteStep(h, session, {}),
      raw: rawStep(raw),
      eventsNotAwaited: remoteStep(h, session, { emit: unawaited(session) }),
      appendsPipelined: remoteStep(h, session, { pipelineAppends: true }),
      both: remoteStep(h, session, { emit: unawaited(session), pipelineAppends: true }),
    },
    bounds,
  );
  const of = (name: string) => summarize(samples[name] ?? []);
  return {
    remote: of("remote"),
    raw: of("raw"),
    whatIf: {
      eventsNotAwaited: of("eventsNotAwaited"),
      appendsPipelined: of("appendsPipelined"),
      both: of("both"),
    },
  };
}
