import { type LoopBounds, type Step, sampleInterleaved } from "../sampling/loop.js";
import { type Summary, summarize } from "../sampling/stats.js";
import {
  type AppendMode,
  type BenchSession,
  type Harness,
  openSession,
  runBatch,
} from "../setup/harness.js";
import { type RawClient, rawJobData } from "../setup/rawBullmq.js";
import { NOOP_TOOL } from "../setup/tools.js";

/** How many parallel calls one batch carries. */
export const FANOUT = 8;

/** Latency of a batch of `FANOUT` parallel no-op calls, now and by the path before this change. */
export interface FanoutLatency {
  /**
   * Through Yiem's remote path as the coordinator runs it: events sent in order without
   * awaiting each reply (`createEventPublisher`), the results appended in one fenced script
   * (`SessionStore.appendMany`) without waiting for its reply.
   */
  remote: Summary;
  /** As `remote`, but the append's reply waited for (before the pipelined append). */
  appendAwaited: Summary;
  /** As `appendAwaited`, but each event awaited (`publishEvent`) as before. */
  eventsAwaited: Summary;
  /** As `remote`, but the results appended one after another (`SessionStore.append`) as before. */
  appendsOneByOne: Summary;
  /** The path before this change: events awaited and results appended one after another. */
  before: Summary;
  /** `FANOUT` raw BullMQ jobs added at once and awaited together (the floor). */
  raw: Summary;
}

/** Which parts of the remote batch run as before. */
interface Variant {
  eventsAwaited?: boolean;
  append?: AppendMode;
}

function remoteStep(h: Harness, session: BenchSession, variant: Variant): Step {
  const emit = variant.eventsAwaited ? session.emitAwaited : session.emit;
  return async () => {
    await runBatch(h, session, NOOP_TOOL, FANOUT, {
      executor: session.remote,
      emit,
      append: variant.append ?? "pipelined",
    });
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
 * Samples a batch of eight parallel no-op calls, Yiem now, Yiem by (parts of) the path before
 * this change, and raw BullMQ, in alternating blocks.
 */
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
      appendAwaited: remoteStep(h, session, { append: "awaited" }),
      eventsAwaited: remoteStep(h, session, { eventsAwaited: true, append: "awaited" }),
      appendsOneByOne: remoteStep(h, session, { append: "oneByOne" }),
      before: remoteStep(h, session, { eventsAwaited: true, append: "oneByOne" }),
    },
    bounds,
  );
  await session.transcript.settle();
  const of = (name: keyof FanoutLatency) => summarize(samples[name] ?? []);
  return {
    remote: of("remote"),
    appendAwaited: of("appendAwaited"),
    eventsAwaited: of("eventsAwaited"),
    appendsOneByOne: of("appendsOneByOne"),
    before: of("before"),
    raw: of("raw"),
  };
}
