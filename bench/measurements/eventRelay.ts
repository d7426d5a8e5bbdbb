import type { BusEvent } from "@yiem/core";
import {
  PARSED_EVENTS,
  parseBusEvent,
  SessionEventHub,
  streamSessionEvents,
} from "@yiem/core/internal";
import { monotonicMs, sleep } from "../sampling/clock.js";
import { type LoopBounds, sampleSequential } from "../sampling/loop.js";
import { type Summary, summarize } from "../sampling/stats.js";
import { type BenchSession, type Harness, openSession, runBatch } from "../setup/harness.js";
import { PARTIAL_TOOL } from "../setup/tools.js";

/** Partial result on a worker → received here, by two kinds of subscriber. */
export interface EventRelay {
  /** Through `streamSessionEvents` (what `YiemClient.events` uses). */
  stream: Summary;
  /** A plain pub/sub subscription on the session channel. */
  pubsub: Summary;
  /** Updates that did not reach both subscribers within 2 s. */
  missed: number;
}

type Receiver = "stream" | "pubsub";

/** Arrival latencies by tool call id, and a way to wait until both receivers saw a call. */
class Arrivals {
  readonly latencies: Record<Receiver, number[]> = { stream: [], pubsub: [] };
  private readonly seen = new Map<string, Set<Receiver>>();
  private readonly waiting = new Map<string, () => void>();
  recording = false;

  record(receiver: Receiver, event: BusEvent | undefined): void {
    if (event?.type !== "toolExecUpdate") return;
    const sentAtMs = (event.partialResult as { sentAtMs?: number }).sentAtMs;
    if (typeof sentAtMs !== "number") return;
    if (this.recording) this.latencies[receiver].push(monotonicMs() - sentAtMs);
    const seen = this.seen.get(event.toolCallId) ?? new Set<Receiver>();
    seen.add(receiver);
    this.seen.set(event.toolCallId, seen);
    if (seen.size === 2) this.waiting.get(event.toolCallId)?.();
  }

  /** Resolves true once both receivers saw `toolCallId`, false after `timeoutMs`. */
  waitFor(toolCallId: string, timeoutMs: number): Promise<boolean> {
    if (this.seen.get(toolCallId)?.size === 2) return Promise.resolve(this.settle(toolCallId));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.settle(toolCallId);
        resolve(false);
      }, timeoutMs);
      this.waiting.set(toolCallId, () => {
        clearTimeout(timer);
        resolve(this.settle(toolCallId));
      });
    });
  }

  private settle(toolCallId: string): true {
    this.seen.delete(toolCallId);
    this.waiting.delete(toolCallId);
    return true;
  }
}

async function consume(stream: AsyncGenerator<BusEvent>, arrivals: Arrivals): Promise<void> {
  for await (const event of stream) arrivals.record("stream", event);
}

function relayStep(h: Harness, session: BenchSession, arrivals: Arrivals, missed: { n: number }) {
  return async () => {
    const batch = await runBatch(h, session, PARTIAL_TOOL, 1, { executor: session.remote });
    const id = batch.messages[0]?.toolCallId ?? "";
    if (!(await arrivals.waitFor(id, 2000))) missed.n++;
    return undefined;
  };
}

/**
 * A tool on a worker emits a partial result stamped with the monotonic clock; both a
 * `streamSessionEvents` reader and a plain subscriber on the session channel stamp its
 * arrival. Calls run one at a time through the remote path.
 */
export async function measureEventRelay(
  h: Harness,
  bounds: { warmup: LoopBounds; samples: LoopBounds },
): Promise<EventRelay> {
  const session = await openSession(h, "relay");
  const arrivals = new Arrivals();
  const plain = h.command.duplicate();
  // A message holds one event or a batch of them, one a line.
  plain.on("message", (_channel: string, text: string) => {
    for (const line of text.split("\n")) arrivals.record("pubsub", parseBusEvent(line));
  });
  await plain.subscribe(h.keys.eventChannel(session.sessionId));
  const controller = new AbortController();
  const hub = new SessionEventHub({ command: h.command, keys: h.keys });
  const reader = consume(
    streamSessionEvents({
      command: h.command,
      hub,
      keys: h.keys,
      sessionId: session.sessionId,
      form: PARSED_EVENTS,
      signal: controller.signal,
    }),
    arrivals,
  );
  await sleep(200); // let the stream subscribe and read its baseline
  const missed = { n: 0 };
  try {
    const step = relayStep(h, session, arrivals, missed);
    await sampleSequential(step, bounds.warmup);
    missed.n = 0;
    arrivals.recording = true;
    await sampleSequential(step, bounds.samples);
  } finally {
    controller.abort();
    await reader;
    hub.close();
    plain.disconnect();
  }
  await session.transcript.settle();
  return {
    stream: summarize(arrivals.latencies.stream),
    pubsub: summarize(arrivals.latencies.pubsub),
    missed: missed.n,
  };
}
