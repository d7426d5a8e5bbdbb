import type { EmitFn, ToolJobResult } from "@yiem/core";
import { JOB_RETENTION, toolJobId } from "@yiem/core/internal";
import { monotonicMs, sleep } from "../sampling/clock.js";
import { type LoopBounds, sampleInterleaved, sampleSequential } from "../sampling/loop.js";
import { summarize } from "../sampling/stats.js";
import {
  appendResults,
  type BenchSession,
  type Harness,
  openSession,
  runBatch,
} from "../setup/harness.js";
import { RAW_TRACED_JOB, type RawClient, rawJobData } from "../setup/rawBullmq.js";
import { TRACED_TOOL } from "../setup/tools.js";
import type { JobMarks } from "../setup/tracingWaiter.js";

/** Median milliseconds of each phase of a remote call (the coordinator's path), in order. */
export interface RemotePhases {
  /** `toolExecStart` sent (before the call is prepared; its reply is not awaited). */
  startEvent: number;
  /** Prepare (argument validation, hooks) until the executor asks the waiter to wait. */
  prepare: number;
  /** `queue.add` round trip. */
  add: number;
  /** From the add being sent until the tool runs on the worker. */
  dispatchToExec: number;
  /** From the tool running until the coordinator's waiter is woken by the worker's announcement. */
  execToResult: number;
  /** Finalize + `toolExecEnd` sent (its reply is not awaited). */
  endEvent: number;
  /**
   * The result message's append sent (`SessionStore.appendMany`); its reply is waited for by
   * the session's next write, sent right behind it.
   */
  append: number;
  /** The whole call. */
  total: number;
}

/** Median milliseconds of each phase of a raw BullMQ job. */
export interface RawPhases {
  add: number;
  /** From the add being sent until the processor runs. */
  dispatchToExec: number;
  /** From the processor running until `waitUntilFinished` resolves. */
  execToResult: number;
  total: number;
}

const RAW_KEYS: Array<keyof RawPhases> = ["add", "dispatchToExec", "execToResult", "total"];

/** Where the time of one call goes, Yiem and raw, by median phase. */
export interface Breakdown {
  remote: RemotePhases;
  raw: RawPhases;
  /**
   * Raw BullMQ again, but each job added after the worker has been idle for a moment (as it is
   * when Yiem adds a job: the coordinator's events and append come in between), to tell the
   * worker's wake-up from anything Yiem does.
   */
  rawAfterIdle: RawPhases;
}

/** How long the worker sits idle before each `rawAfterIdle` job. */
export const IDLE_BEFORE_MS = 1;

function execAt(details: Record<string, unknown> | undefined): number {
  return Number(details?.execAtMs ?? Number.NaN);
}

function median(values: number[]): number {
  return summarize(values).p50;
}

type RemoteSample = Record<keyof RemotePhases, number>;

async function tracedRemoteCall(h: Harness, session: BenchSession): Promise<RemoteSample> {
  const events: Record<string, number> = {};
  const emit: EmitFn = async (event) => {
    await session.emit(event); // the coordinator's emitter: returns once the event is sent
    events[event.type] = monotonicMs();
  };
  const t0 = monotonicMs();
  const batch = await runBatch(h, session, TRACED_TOOL, 1, {
    executor: session.remote,
    emit,
    persist: false,
  });
  const message = batch.messages[0];
  if (!message) throw new Error("no result message");
  const batchDone = monotonicMs();
  appendResults(h, session, batch.messages);
  const appended = monotonicMs();
  const jobId = toolJobId(session.sessionId, session.runId, message.toolCallId);
  const mark: Partial<JobMarks> = h.waiter.take(jobId) ?? {};
  const exec = execAt(message.details);
  const startEvent = events.toolExecStart ?? Number.NaN;
  const dispatch = mark.dispatch ?? Number.NaN;
  const result = mark.result ?? Number.NaN;
  return {
    startEvent: startEvent - t0,
    prepare: dispatch - startEvent,
    add: (mark.added ?? Number.NaN) - dispatch,
    dispatchToExec: exec - dispatch,
    execToResult: result - exec,
    endEvent: (events.toolExecEnd ?? Number.NaN) - result,
    append: appended - batchDone,
    total: appended - t0,
  };
}

async function tracedRawCall(raw: RawClient, n: number): Promise<Record<keyof RawPhases, number>> {
  const t0 = monotonicMs();
  const job = await raw.queue.add(RAW_TRACED_JOB, rawJobData("bench-traced", "r0000000", n), {
    attempts: 1,
    ...JOB_RETENTION,
  });
  const added = monotonicMs();
  const value = (await job.waitUntilFinished(raw.events, 10_000)) as ToolJobResult;
  const done = monotonicMs();
  const exec = execAt(value.result.details);
  return {
    add: added - t0,
    dispatchToExec: exec - t0,
    execToResult: done - exec,
    total: done - t0,
  };
}

function medians<K extends string>(
  samples: Array<Record<K, number>>,
  keys: K[],
): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const key of keys) out[key] = median(samples.map((sample) => sample[key]));
  return out;
}

/**
 * Times each phase of a remote call (a traced no-op on the worker reports when it ran, on the
 * machine's monotonic clock) and of a raw BullMQ job, in alternating blocks.
 */
export async function measureBreakdown(
  h: Harness,
  raw: RawClient,
  bounds: { warmup: LoopBounds; samples: LoopBounds; rounds: number },
): Promise<Breakdown> {
  const session = await openSession(h, "traced");
  const remote: RemoteSample[] = [];
  const rawSamples: Array<Record<keyof RawPhases, number>> = [];
  const idleSamples: Array<Record<keyof RawPhases, number>> = [];
  let n = 0;
  const remoteStep = async () => {
    remote.push(await tracedRemoteCall(h, session));
    return undefined;
  };
  const rawStep = async () => {
    rawSamples.push(await tracedRawCall(raw, ++n));
    return undefined;
  };
  const idleStep = async () => {
    await sleep(IDLE_BEFORE_MS);
    idleSamples.push(await tracedRawCall(raw, ++n));
    return undefined;
  };
  h.waiter.tracing = true;
  try {
    await sampleSequential(remoteStep, bounds.warmup);
    await sampleSequential(rawStep, bounds.warmup);
    remote.length = 0;
    rawSamples.length = 0;
    idleSamples.length = 0;
    const noWarmup = { count: 0, maxMs: 0 };
    await sampleInterleaved(
      { remote: remoteStep, raw: rawStep, rawAfterIdle: idleStep },
      { ...bounds, warmup: noWarmup },
    );
  } finally {
    h.waiter.tracing = false;
    h.waiter.marks.clear();
  }
  await session.transcript.settle();
  return {
    remote: medians(remote, [
      "startEvent",
      "prepare",
      "add",
      "dispatchToExec",
      "execToResult",
      "endEvent",
      "append",
      "total",
    ]),
    raw: medians(rawSamples, RAW_KEYS),
    rawAfterIdle: medians(idleSamples, RAW_KEYS),
  };
}
