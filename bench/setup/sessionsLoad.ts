/**
 * How the `sessions` scenario's requests arrive and how their answers are seen: one
 * `queue.addBulk` from this process (the bulk shape), or separate `YiemClient.send` calls from a
 * client process of its own (`bench/workers/sessionSender.ts`, the sends shape); either way one
 * `QueueEvents` listener here logs every request job that completes or fails, from before the
 * first request goes out.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProcess } from "@yiem/testing";
import type { QueueEvents } from "bullmq";
import { sourceCommand, spawnCommand } from "../../test/support/processes.js";
import { settlesWithin } from "../sampling/clock.js";
import { SESSION_ANSWER, type SessionsCluster } from "./sessionsCluster.js";

/** How one load's requests reach the coordinator queue. */
export type Arrival =
  | {
      kind: "bulk";
      /** The request's data beyond `input` (e.g. `{ agent: "bench" }`). */
      extra?: Record<string, unknown>;
      input: string;
    }
  | { kind: "sends"; sender: SessionSender };

/** What one load did. */
export interface LoadOutcome {
  answered: number;
  unanswered: number;
  /** From the first request sent to the last answer (ms). */
  wallMs: number;
  /** From the first request sent to each answer (ms). */
  latencies: number[];
}

/** Every request job's end seen since the log started: when, and with the scripted answer or not. */
interface CompletionLog {
  /** Resolves once every one of `ids` ended (or never: bound it). */
  waitFor(ids: readonly string[]): Promise<void>;
  ended: Map<string, { at: number; answered: boolean }>;
  stop(): void;
}

/** True for a job's return value carrying the scripted final answer. */
function isExpectedAnswer(returnvalue: unknown): boolean {
  const response = (returnvalue as { response?: { content?: Array<{ text?: string }> } })?.response;
  return response?.content?.[0]?.text === SESSION_ANSWER;
}

/** Logs every 'completed' and 'failed' of the coordinator queue from now on. */
function startCompletionLog(events: QueueEvents): CompletionLog {
  const ended = new Map<string, { at: number; answered: boolean }>();
  let waiting: { open: Set<string>; resolve: () => void } | undefined;
  const end = (jobId: string, answered: boolean) => {
    if (!ended.has(jobId)) ended.set(jobId, { at: performance.now(), answered });
    if (waiting?.open.delete(jobId) && waiting.open.size === 0) waiting.resolve();
  };
  const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) =>
    end(jobId, isExpectedAnswer(returnvalue));
  const onFailed = ({ jobId }: { jobId: string }) => end(jobId, false);
  events.on("completed", onCompleted);
  events.on("failed", onFailed);
  return {
    ended,
    waitFor(ids) {
      const open = new Set(ids.filter((id) => !ended.has(id)));
      if (open.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiting = { open, resolve };
      });
    },
    stop() {
      events.off("completed", onCompleted);
      events.off("failed", onFailed);
    },
  };
}

/** A client process that sends requests with `YiemClient.send` when told to. */
export interface SessionSender {
  pid: number;
  /** Sends its requests (each a `send` of its own, all at once); their run ids. */
  sendAll(timeoutMs: number): Promise<string[]>;
  stop(): Promise<void>;
}

/** Starts `bench/workers/sessionSender.ts` against the cluster: `count` sends of `input` per go. */
export async function startSessionSender(
  cluster: SessionsCluster,
  count: number,
  input: string,
): Promise<SessionSender> {
  const dir = await mkdtemp(join(tmpdir(), "yiem-bench-sender-"));
  const child: TestProcess = spawnCommand(sourceCommand("bench/workers/sessionSender.ts"), {
    BENCH_REDIS_URL: cluster.redis.url,
    BENCH_PREFIX: cluster.redis.prefix,
    BENCH_SEND_COUNT: String(count),
    BENCH_SEND_INPUT: input,
    BENCH_SEND_DIR: dir,
  });
  const stop = async () => {
    await child.stop(2000);
    await rm(dir, { recursive: true, force: true });
  };
  await child
    .waitForLine((line) => line.includes('"sender ready"'), 90_000)
    .catch(async (err) => {
      await stop();
      throw err;
    });
  let batches = 0;
  return {
    pid: child.pid,
    async sendAll(timeoutMs) {
      const seen = ++batches;
      let found = 0;
      child.signal("SIGUSR2");
      const line = await child.waitForLine(
        (l) => (l.startsWith('{"sent"') || l.startsWith('{"sendFailed"')) && ++found === seen,
        timeoutMs,
      );
      const parsed = JSON.parse(line) as { sent?: { file: string }; sendFailed?: string };
      if (!parsed.sent) throw new Error(`the sender failed: ${parsed.sendFailed}`);
      return JSON.parse(await readFile(parsed.sent.file, "utf8")) as string[];
    },
    stop,
  };
}

/** Sends `count` fresh requests (no `sessionId`) the way `arrival` says; their job ids. */
async function sendRequests(
  cluster: SessionsCluster,
  arrival: Arrival,
  tag: string,
  count: number,
  maxMs: number,
): Promise<string[]> {
  if (arrival.kind === "sends") return arrival.sender.sendAll(maxMs);
  const ids = Array.from({ length: count }, (_, i) => `${tag}-${i + 1}`);
  const data = { input: arrival.input, ...arrival.extra };
  await cluster.queue.addBulk(ids.map((jobId) => ({ name: "session", data, opts: { jobId } })));
  return ids;
}

/**
 * Starts `count` fresh sessions as `arrival` says and waits for every request job's
 * 'completed' or 'failed' event, or `maxMs`.
 */
export async function runSessions(
  cluster: SessionsCluster,
  arrival: Arrival,
  tag: string,
  count: number,
  maxMs: number,
): Promise<LoadOutcome> {
  const log = startCompletionLog(cluster.events);
  try {
    const started = performance.now();
    const ids = await sendRequests(cluster, arrival, tag, count, maxMs);
    await settlesWithin(log.waitFor(ids), maxMs);
    const latencies = ids.flatMap((id) => {
      const end = log.ended.get(id);
      return end?.answered ? [end.at - started] : [];
    });
    return {
      answered: latencies.length,
      unanswered: count - latencies.length,
      wallMs: Math.max(0, ...latencies),
      latencies,
    };
  } finally {
    log.stop();
  }
}
