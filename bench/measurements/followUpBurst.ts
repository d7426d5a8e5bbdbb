/**
 * A burst of follow-ups to one session, sent with plain BullMQ to a real cluster (a coordinator
 * and a tool worker process, as the tests start them): the Redis work per follow-up for a
 * small and a large burst, and how long another session's plain message waits while the large
 * burst is answered.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply } from "@yiem/testing";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { startTestCluster, type TestCluster } from "../../test/support/cluster.js";
import { settlesWithin, sleep } from "../sampling/clock.js";
import { round, type Summary, summarize } from "../sampling/stats.js";

/** Sizes and bounds of the scenario. */
export interface FollowUpBurstPlan {
  /** Follow-ups in the small burst. */
  small: number;
  /** Follow-ups in the large burst (other sessions are probed meanwhile). */
  large: number;
  /** Plain messages to fresh sessions, one after another, before the bursts (idle cluster). */
  idleMessages: number;
  /** Plain messages to fresh sessions, one after another, during the large burst. */
  probes: number;
  /** The probes start once this many follow-ups of the large burst have been answered. */
  probesAfter: number;
  /** How long one burst may take before it is given up. */
  maxBurstMs: number;
  /** How long one plain message may take before it counts as unanswered. */
  maxMessageMs: number;
}

/** One burst of follow-ups to one fresh session. */
export interface BurstFigures {
  size: number;
  /** Follow-ups that completed (the others failed or were still open when given up). */
  answered: number;
  /** `total_commands_processed` (INFO stats) after the burst minus before. */
  commands: number;
  /** `commands / size`. */
  commandsPerFollowUp: number;
  /** From `queue.addBulk` sent to the last follow-up answered (ms). */
  wallMs: number;
}

/** What the follow-up burst scenario measured. */
export interface FollowUpBurst {
  small: BurstFigures;
  large: BurstFigures;
  /** Commands per follow-up, large burst / small burst (target ≤ 1.5). */
  ratio: number;
  /** Plain messages to fresh sessions on the idle cluster: `queue.add` → completed (ms). */
  idle: Summary;
  /** Redis commands per plain message on the idle cluster. */
  commandsPerMessage: number;
  /** Plain messages to fresh sessions during the large burst: `queue.add` → completed (ms). */
  otherSession: Summary;
  /** Each probe's latency in the order sent (ms; `NaN` when unanswered). */
  otherSessionSamples: number[];
  /**
   * For each probe, the jobs waiting in the coordinator queue (not yet taken by the
   * coordinator) when it was added: follow-ups of the burst it queued behind.
   */
  otherSessionWaitingAhead: number[];
  /** Probes answered while follow-ups of the large burst were still unanswered. */
  probesDuringBurst: number;
  /** Probes (idle or during the burst) not answered within `maxMessageMs`. */
  unanswered: number;
}

/** Answers every request at once with a short text. */
function respond(): ScriptedReply {
  return { kind: "text", text: "ok" };
}

/** The cluster and a plain BullMQ client of its coordinator queue. */
interface BurstRig {
  cluster: TestCluster;
  redis: Redis;
  queue: Queue;
  events: QueueEvents;
  /** The `QueueEvents` reader's own connection (BullMQ does not close one it was given). */
  eventsConnection: Redis;
}

async function openBurstRig(): Promise<BurstRig> {
  const cluster = await startTestCluster({
    workers: 1,
    coordinators: 1,
    redis: { privateServer: true },
    model: { respond },
  });
  const redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: null });
  const prefix = `${cluster.redis.prefix}:bull`;
  const queue = new Queue("coordinator", { connection: redis, prefix });
  const eventsConnection = redis.duplicate();
  const events = new QueueEvents("coordinator", { connection: eventsConnection, prefix });
  await events.waitUntilReady();
  return { cluster, redis, queue, events, eventsConnection };
}

async function closeBurstRig(rig: BurstRig): Promise<void> {
  await rig.events.close().catch(() => undefined);
  await rig.queue.close().catch(() => undefined);
  rig.eventsConnection.disconnect();
  rig.redis.disconnect();
  await rig.cluster.stop();
}

async function readCommandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** Jobs being watched through `QueueEvents`, one listener for all of them. */
interface JobWatch {
  /** Resolves once every job completed or failed. */
  settled: Promise<void>;
  completed(): number;
  /** Jobs that completed or failed so far. */
  finished(): number;
  stop(): void;
}

/** Watches `ids` for 'completed' and 'failed' (register before the jobs are added). */
function watchJobs(events: QueueEvents, ids: readonly string[]): JobWatch {
  const open = new Set(ids);
  let completed = 0;
  let resolve: () => void = () => undefined;
  const settled = new Promise<void>((done) => {
    resolve = done;
  });
  const settle = (jobId: string, ok: boolean) => {
    if (!open.delete(jobId)) return;
    if (ok) completed++;
    if (open.size === 0) resolve();
  };
  const onCompleted = ({ jobId }: { jobId: string }) => settle(jobId, true);
  const onFailed = ({ jobId }: { jobId: string }) => settle(jobId, false);
  events.on("completed", onCompleted);
  events.on("failed", onFailed);
  if (open.size === 0) resolve();
  return {
    settled,
    completed: () => completed,
    finished: () => ids.length - open.size,
    stop() {
      events.off("completed", onCompleted);
      events.off("failed", onFailed);
    },
  };
}

/**
 * Sends one plain message to a fresh session (no `sessionId`) and returns the time from
 * `queue.add` to its 'completed' event (ms), or `NaN` when it did not complete in time.
 */
async function sendPlainMessage(rig: BurstRig, maxMs: number): Promise<number> {
  const jobId = `plain-${randomUUID()}`;
  const watch = watchJobs(rig.events, [jobId]);
  const started = performance.now();
  await rig.queue.add("plain", { input: "an unrelated question" }, { jobId });
  const settled = await settlesWithin(watch.settled, maxMs);
  const elapsed = performance.now() - started;
  watch.stop();
  return settled && watch.completed() === 1 ? elapsed : Number.NaN;
}

/** Sends `count` plain messages one after another; returns each one's latency (ms). */
async function sendPlainMessages(rig: BurstRig, count: number, maxMs: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) latencies.push(await sendPlainMessage(rig, maxMs));
  return latencies;
}

/** The probes sent during a burst, in the order sent. */
interface ProbeResult {
  latencies: number[];
  /** Jobs waiting in the coordinator queue (not yet taken) when each probe was added. */
  waitingAhead: number[];
  /** Probes answered while the burst still had unanswered follow-ups. */
  duringBurst: number;
}

/** Waits until `burst` has `count` finished jobs or `maxMs` has passed. */
async function waitForFinished(burst: JobWatch, count: number, maxMs: number): Promise<void> {
  const deadline = performance.now() + maxMs;
  while (burst.finished() < count && performance.now() < deadline) await sleep(10);
}

/**
 * Once `plan.probesAfter` follow-ups of `burst` are answered, sends `plan.probes` plain
 * messages to fresh sessions one after another, noting for each how many jobs were still
 * waiting ahead of it and whether the burst still had unanswered follow-ups when it was answered.
 */
async function probeDuring(
  rig: BurstRig,
  burst: JobWatch,
  size: number,
  plan: FollowUpBurstPlan,
): Promise<ProbeResult> {
  await waitForFinished(burst, Math.min(plan.probesAfter, size), plan.maxBurstMs);
  const result: ProbeResult = { latencies: [], waitingAhead: [], duringBurst: 0 };
  for (let i = 0; i < plan.probes; i++) {
    result.waitingAhead.push(await rig.queue.getWaitingCount());
    result.latencies.push(await sendPlainMessage(rig, plan.maxMessageMs));
    if (burst.finished() < size) result.duringBurst++;
  }
  return result;
}

/**
 * Sends `size` follow-ups (`followUp: true`) to one fresh session in one `queue.addBulk` and
 * waits for all their answers; `during` runs meanwhile. Counts Redis commands around it all.
 */
async function runBurst<T>(
  rig: BurstRig,
  size: number,
  maxMs: number,
  during: (burst: JobWatch) => Promise<T>,
): Promise<{ figures: BurstFigures; during: T }> {
  const sessionId = `burst-${randomUUID()}`;
  const ids = Array.from({ length: size }, (_, i) => `${sessionId}-${i + 1}`);
  const watch = watchJobs(rig.events, ids);
  const before = await readCommandsProcessed(rig.redis);
  const started = performance.now();
  await rig.queue.addBulk(
    ids.map((jobId, i) => ({
      name: "follow-up",
      data: { sessionId, input: `follow-up ${i + 1}`, followUp: true },
      opts: { jobId },
    })),
  );
  const alongside = during(watch);
  await settlesWithin(watch.settled, maxMs);
  const wallMs = performance.now() - started;
  const result = await alongside;
  watch.stop();
  const commands = (await readCommandsProcessed(rig.redis)) - before;
  const figures = {
    size,
    answered: watch.completed(),
    commands,
    commandsPerFollowUp: commands / size,
    wallMs,
  };
  return { figures, during: result };
}

/** Counts the Redis commands of `count` plain messages sent one after another on an idle cluster. */
async function measureIdle(rig: BurstRig, plan: FollowUpBurstPlan) {
  const before = await readCommandsProcessed(rig.redis);
  const latencies = await sendPlainMessages(rig, plan.idleMessages, plan.maxMessageMs);
  const commands = (await readCommandsProcessed(rig.redis)) - before;
  return { latencies, commandsPerMessage: commands / Math.max(1, plan.idleMessages) };
}

function answeredOnly(latencies: number[]): number[] {
  return latencies.filter(Number.isFinite);
}

/**
 * Starts a cluster (one coordinator, one tool worker, a private Redis, a model that answers at
 * once), sends plain messages on the idle cluster (warm-up and baseline), then a small and a
 * large burst of follow-ups to one fresh session each, probing other sessions during the large
 * one.
 */
export async function measureFollowUpBurst(plan: FollowUpBurstPlan): Promise<FollowUpBurst> {
  const rig = await openBurstRig();
  try {
    const idle = await measureIdle(rig, plan);
    const none = async () => undefined;
    const small = await runBurst(rig, plan.small, plan.maxBurstMs, none);
    const large = await runBurst(rig, plan.large, plan.maxBurstMs, (burst) =>
      probeDuring(rig, burst, plan.large, plan),
    );
    const probes = large.during.latencies;
    return {
      small: small.figures,
      large: large.figures,
      ratio: large.figures.commandsPerFollowUp / small.figures.commandsPerFollowUp,
      idle: summarize(answeredOnly(idle.latencies)),
      commandsPerMessage: idle.commandsPerMessage,
      otherSession: summarize(answeredOnly(probes)),
      otherSessionSamples: probes.map((ms) => round(ms, 1)),
      otherSessionWaitingAhead: large.during.waitingAhead,
      probesDuringBurst: large.during.duringBurst,
      unanswered: [...idle.latencies, ...probes].filter((ms) => !Number.isFinite(ms)).length,
    };
  } finally {
    await closeBurstRig(rig);
  }
}
