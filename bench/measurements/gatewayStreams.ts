/**
 * Many server-sent-event watchers on one gateway process: each session has one watcher
 * (`GET /v1/sessions/{id}/events`), then every session gets one run, paced, through the
 * coordinator queue. Each event's delivery time runs from its publish (`BusEvent.ts`, the
 * publisher's wall clock, stamped just before the publish) to its arrival here (this process's
 * wall clock); both clocks are the machine's, read in whole milliseconds.
 */
import { randomUUID } from "node:crypto";
import { cpus } from "node:os";
import { monotonicMs, settlesWithin, sleep } from "../sampling/clock.js";
import {
  countBusyCores,
  type ProcessGroups,
  readGroupCpuMs,
  readMachineTicks,
  startRssSampler,
  subtractCpu,
} from "../sampling/processSampler.js";
import { openSseWatcher, type SseWatcher, type WatchedEvent } from "../sampling/sseWatcher.js";
import { type Summary, summarize } from "../sampling/stats.js";
import type { GatewayCluster } from "../setup/gatewayCluster.js";

/** Sizes of the watcher phase. */
export interface GatewayStreamsPlan {
  /** Sessions, one watcher each. */
  watchers: number;
  /** Watchers opened at once while connecting. */
  connectInFlight: number;
  /** Measured runs started per second (one per session). */
  runsPerS: number;
  /** How often RSS is sampled (ms). */
  rssIntervalMs: number;
  /** How long the idle Redis command rate is read over, before and with the watchers (ms). */
  idleMs: number;
  /** How long the runs may take to reach every watcher (ms). */
  maxMs: number;
}

/** What the watcher phase measured. */
export interface GatewayStreams {
  watchers: number;
  /** Watchers that saw their run's `agentEnd`. */
  complete: number;
  /** Events of the measured runs received, all watchers. */
  events: number;
  /** Events received out of order or after a gap (stored events; none expected). */
  outOfOrder: number;
  /** Publish → arrival of every event of the measured runs (ms). */
  delivery: Summary;
  /** The same for stored events only (those with an `id:`). */
  deliveryStored: Summary;
  /**
   * The anchor: publish → arrival of the same events at one plain Redis subscriber in this
   * process (`PSUBSCRIBE` on every session's channel, no gateway), measured at the same time.
   */
  deliveryDirect: Summary;
  /** From the first run added to the last `agentEnd` received (ms). */
  wallMs: number;
  runsPerS: number;
  /** Redis clients (`INFO clients` `connected_clients`) before the watchers and with them open. */
  redisClientsBefore: number;
  redisClientsWatching: number;
  /** Redis commands per second with nothing running, before the watchers and with them open. */
  redisCommandsPerSIdleBefore: number;
  redisCommandsPerSIdleWatching: number;
  /** The gateway's CPU during the measured runs, in cores (CPU ms ÷ wall ms). */
  gatewayCores: number;
  /** The gateway's CPU per event delivered (ms). */
  gatewayCpuMsPerEvent: number;
  gatewayRssBeforeMb: number;
  /** The highest gateway RSS sampled with the watchers open (MiB). */
  gatewayRssPeakMb: number;
  coordinatorCores: number;
  /** This process's CPU meanwhile (the watchers, the anchor subscriber, the model), in cores. */
  benchCores: number;
  machineBusyCores: number;
  cores: number;
}

/** One session's watcher and what it saw of its measured run. */
interface Watch {
  sessionId: string;
  watcher: SseWatcher;
  runId: string | undefined;
  lastSeq: number;
  outOfOrder: number;
  delays: number[];
  storedDelays: number[];
  /** Resolves at the warm-up run's `agentEnd` (the stream is subscribed by then). */
  replayed: Promise<void>;
  done: Promise<void>;
  endedAt: number;
}

async function readRedisClients(cluster: GatewayCluster): Promise<number> {
  const info = await cluster.base.connection.info("clients");
  return Number(/connected_clients:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** Starts one run in each of `sessionIds` (one `addBulk`) and waits for every answer. */
async function seedSessions(cluster: GatewayCluster, sessionIds: string[], maxMs: number) {
  const jobs = sessionIds.map((sessionId) => ({
    name: "request",
    data: { input: "run both steps", sessionId, followUp: false },
    opts: { jobId: randomUUID() },
  }));
  const added = await cluster.base.queue.addBulk(jobs);
  await Promise.all(added.map((job) => job.waitUntilFinished(cluster.base.events, maxMs)));
}

/** Opens the watcher of `sessionId`: replays its warm-up run, then records its measured run. */
async function openWatch(cluster: GatewayCluster, sessionId: string): Promise<Watch> {
  let replayedResolve: () => void = () => undefined;
  let doneResolve: () => void = () => undefined;
  const watch = {
    sessionId,
    runId: undefined,
    lastSeq: 0,
    outOfOrder: 0,
    delays: [],
    storedDelays: [],
    replayed: new Promise<void>((r) => {
      replayedResolve = r;
    }),
    done: new Promise<void>((r) => {
      doneResolve = r;
    }),
    endedAt: Number.NaN,
  } as unknown as Watch;
  const onEvent = (event: WatchedEvent) => {
    if (!event.live) {
      if (event.seq !== watch.lastSeq + 1) watch.outOfOrder++;
      watch.lastSeq = event.seq;
    }
    if (event.runId !== watch.runId) {
      if (event.type === "agentEnd") replayedResolve();
      return;
    }
    const delay = event.receivedAt - event.ts;
    watch.delays.push(delay);
    if (!event.live) watch.storedDelays.push(delay);
    if (event.type === "agentEnd") {
      watch.endedAt = event.receivedAt;
      doneResolve();
    }
  };
  const url = `${cluster.gateway.url}/v1/sessions/${encodeURIComponent(sessionId)}/events`;
  watch.watcher = await openSseWatcher(url, onEvent);
  if (watch.watcher.status !== 200)
    throw new Error(`watcher of ${sessionId}: HTTP ${watch.watcher.status}`);
  return watch;
}

/** Opens a watcher per session, `inFlight` at a time, and waits until each replayed. */
async function openWatches(
  cluster: GatewayCluster,
  sessionIds: string[],
  inFlight: number,
  maxMs: number,
): Promise<Watch[]> {
  const watches: Watch[] = [];
  for (let at = 0; at < sessionIds.length; at += inFlight) {
    const slice = sessionIds.slice(at, at + inFlight);
    watches.push(...(await Promise.all(slice.map((id) => openWatch(cluster, id)))));
  }
  const replayed = await settlesWithin(Promise.all(watches.map((w) => w.replayed)).then(), maxMs);
  if (!replayed) throw new Error("gateway: watchers did not replay their sessions in time");
  return watches;
}

/** Adds each watched session's run (`runId`), `runsPerS` a second; returns when it started. */
async function startPacedRuns(cluster: GatewayCluster, watches: Watch[], runsPerS: number) {
  const startedAt = Date.now();
  const perTick = Math.max(1, Math.round(runsPerS / 20));
  for (let at = 0; at < watches.length; at += perTick) {
    const due = startedAt + (at / runsPerS) * 1000;
    if (due > Date.now()) await sleep(due - Date.now());
    const slice = watches.slice(at, at + perTick);
    await cluster.base.queue.addBulk(
      slice.map((watch) => ({
        name: "request",
        data: { input: "run both steps", sessionId: watch.sessionId, followUp: false },
        opts: { jobId: watch.runId },
      })),
    );
  }
  return startedAt;
}

/** Redis commands per second over `ms` (`INFO stats` `total_commands_processed`, whole server). */
async function readCommandRate(cluster: GatewayCluster, ms: number): Promise<number> {
  const read = async () => {
    const info = await cluster.base.connection.info("stats");
    return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
  };
  const before = await read();
  await sleep(ms);
  return ((await read()) - before - 1) / (ms / 1000); // less the first INFO
}

/** A plain subscriber to every session's event channel: publish → arrival of `runIds`' events. */
async function openDirectSubscriber(cluster: GatewayCluster, runIds: ReadonlySet<string>) {
  const subscriber = cluster.base.connection.duplicate();
  const delays: number[] = [];
  subscriber.on("pmessage", (_pattern: string, _channel: string, text: string) => {
    const receivedAt = Date.now();
    // A message holds one event or a batch of them, one a line.
    for (const line of text.split("\n")) {
      const event = JSON.parse(line) as { runId?: string; ts: number };
      if (event.runId !== undefined && runIds.has(event.runId)) delays.push(receivedAt - event.ts);
    }
  });
  await subscriber.psubscribe(`${cluster.base.redis.prefix}:events:*`);
  return {
    delays,
    close: () => subscriber.disconnect(),
  };
}

type Group = "gateway" | "coordinator";

/** What was read before the watchers opened. */
interface Baseline {
  redisClientsBefore: number;
  redisCommandsPerSIdleBefore: number;
  gatewayRssBeforeMb: number;
}

/** Reads the Redis clients, the idle command rate and the gateway's RSS before the watchers. */
async function readBaseline(
  cluster: GatewayCluster,
  groups: ProcessGroups<Group>,
  plan: GatewayStreamsPlan,
): Promise<Baseline> {
  const redisClientsBefore = await readRedisClients(cluster);
  const redisCommandsPerSIdleBefore = await readCommandRate(cluster, plan.idleMs);
  const rss = startRssSampler(groups, plan.rssIntervalMs);
  await sleep(2 * plan.rssIntervalMs);
  const gatewayRssBeforeMb = (await rss.stop()).gateway ?? Number.NaN;
  return { redisClientsBefore, redisCommandsPerSIdleBefore, gatewayRssBeforeMb };
}

/** Gives each watch its run id; the set of them. */
function assignRuns(watches: Watch[]): Set<string> {
  const runIds = new Set<string>();
  for (const watch of watches) {
    watch.runId = randomUUID();
    runIds.add(watch.runId);
  }
  return runIds;
}

/** The paced runs with CPU read around them and RSS sampled during them. */
async function readWatchedRuns(
  cluster: GatewayCluster,
  watches: Watch[],
  groups: ProcessGroups<Group>,
  plan: GatewayStreamsPlan,
) {
  const rss = startRssSampler(groups, plan.rssIntervalMs);
  const cpuBefore = await readGroupCpuMs(groups);
  const machineBefore = await readMachineTicks();
  const benchBefore = process.cpuUsage();
  const fromMs = monotonicMs();
  const startedAt = await startPacedRuns(cluster, watches, plan.runsPerS);
  await settlesWithin(Promise.all(watches.map((w) => w.done)).then(), plan.maxMs);
  const spanMs = monotonicMs() - fromMs;
  const bench = process.cpuUsage(benchBefore);
  const cpu = subtractCpu(await readGroupCpuMs(groups), cpuBefore);
  const machineBusyCores = countBusyCores(await readMachineTicks(), machineBefore, cpus().length);
  const rssPeak = await rss.stop();
  return { startedAt, spanMs, bench, cpu, machineBusyCores, rssPeak };
}

type WatchedRuns = Awaited<ReturnType<typeof readWatchedRuns>>;

/** The phase's figures from what was read. */
function toStreams(
  watches: Watch[],
  direct: number[],
  readings: Baseline & WatchedRuns & { redisClientsWatching: number; idleWatching: number },
  plan: GatewayStreamsPlan,
): GatewayStreams {
  const r = readings;
  const complete = watches.filter((w) => Number.isFinite(w.endedAt));
  const events = watches.reduce((sum, w) => sum + w.delays.length, 0);
  return {
    watchers: plan.watchers,
    complete: complete.length,
    events,
    outOfOrder: watches.reduce((sum, w) => sum + w.outOfOrder, 0),
    delivery: summarize(watches.flatMap((w) => w.delays)),
    deliveryStored: summarize(watches.flatMap((w) => w.storedDelays)),
    deliveryDirect: summarize(direct),
    wallMs: Math.max(0, ...complete.map((w) => w.endedAt - r.startedAt)),
    runsPerS: plan.runsPerS,
    redisClientsBefore: r.redisClientsBefore,
    redisClientsWatching: r.redisClientsWatching,
    redisCommandsPerSIdleBefore: r.redisCommandsPerSIdleBefore,
    redisCommandsPerSIdleWatching: r.idleWatching,
    gatewayCores: r.cpu.gateway / r.spanMs,
    gatewayCpuMsPerEvent: r.cpu.gateway / events,
    gatewayRssBeforeMb: r.gatewayRssBeforeMb,
    gatewayRssPeakMb: r.rssPeak.gateway ?? Number.NaN,
    coordinatorCores: r.cpu.coordinator / r.spanMs,
    benchCores: (r.bench.user + r.bench.system) / 1000 / r.spanMs,
    machineBusyCores: r.machineBusyCores,
    cores: cpus().length,
  };
}

/** Runs the watcher phase on `cluster` and closes the watchers whatever happened. */
export async function measureGatewayStreams(
  cluster: GatewayCluster,
  plan: GatewayStreamsPlan,
  progress: (text: string) => void,
): Promise<GatewayStreams> {
  const sessionIds = Array.from({ length: plan.watchers }, () => randomUUID());
  progress(`gateway: ${plan.watchers} sessions seeded with one run each`);
  await seedSessions(cluster, sessionIds, plan.maxMs);
  const groups: ProcessGroups<Group> = {
    gateway: [cluster.gateway.pid],
    coordinator: [cluster.coordinator.process.pid],
  };
  const baseline = await readBaseline(cluster, groups, plan);
  progress(`gateway: opening ${plan.watchers} event streams`);
  const watches = await openWatches(cluster, sessionIds, plan.connectInFlight, plan.maxMs);
  let closeDirect: () => void = () => undefined;
  try {
    const redisClientsWatching = await readRedisClients(cluster);
    const idleWatching = await readCommandRate(cluster, plan.idleMs);
    const direct = await openDirectSubscriber(cluster, assignRuns(watches));
    closeDirect = direct.close;
    progress(`gateway: ${plan.watchers} runs at ${plan.runsPerS}/s, watched`);
    const runs = await readWatchedRuns(cluster, watches, groups, plan);
    const readings = { ...baseline, ...runs, redisClientsWatching, idleWatching };
    return toStreams(watches, direct.delays, readings, plan);
  } finally {
    closeDirect();
    for (const watch of watches) watch.watcher.close();
  }
}
