/**
 * The `gatewayReaders` scenario (`--only gatewayReaders`, issue 34's finding 2): one compiled
 * gateway with a keys file (`setup/keyedGateway.ts`, on the gateway cluster of
 * `setup/gatewayCluster.ts`) holding many stalled event-stream readers (their sockets never
 * read) and as many live ones, while runs with large answers go through their sessions; the
 * gateway's peak RSS meanwhile, and the latency of another key's requests.
 */

import { monotonicMs, sleep } from "../sampling/clock.js";
import { loadAverage } from "../sampling/environment.js";
import { readRssMb, startRssSampler } from "../sampling/processSampler.js";
import { openSseReader, type SseReader } from "../sampling/sseReader.js";
import { type Summary, summarize } from "../sampling/stats.js";
import { type GatewayClusterPlan, openGatewayCluster } from "../setup/gatewayCluster.js";
import { type BenchKey, type KeyedGateway, startKeyedGateway } from "../setup/keyedGateway.js";

/** Sizes of the scenario. */
export interface GatewayReadersPlan {
  cluster: GatewayClusterPlan;
  /** Sessions the readers watch. */
  sessions: number;
  /** Stalled readers per session. */
  stalledPerSession: number;
  /** Live readers per session. */
  livePerSession: number;
  /** Runs with a large answer, one per session from the first on. */
  largeRuns: number;
  /** Characters of each large answer. */
  answerChars: number;
  /** Readers or runs opened at once. */
  inFlight: number;
  /** How often RSS is sampled (ms). */
  rssIntervalMs: number;
  /** How long the load may take (ms). */
  maxMs: number;
}

/** What the scenario measured. */
export interface GatewayReaders {
  plan: GatewayReadersPlan;
  stalled: number;
  live: number;
  /** Readers the gateway refused (any status but 200). */
  refused: number;
  /** Readers the gateway cut for falling behind (its log's "event stream reader cut"). */
  readersCut: number;
  /** Live readers that read the `agentEnd` of their session's large run (of those on one). */
  liveComplete: number;
  liveOnLargeRuns: number;
  /** Bytes the live readers read in all (MiB). */
  liveReadMb: number;
  largeRunsAnswered: number;
  gatewayRssBeforeMb: number;
  /** The gateway's RSS with every reader open, before the runs (MiB). */
  gatewayRssReadersMb: number;
  /** The highest RSS sampled from the first reader to the end (MiB). */
  gatewayRssPeakMb: number;
  /** The gateway's RSS a second after the last run reached its readers (MiB). */
  gatewayRssEndMb: number;
  /** Another key's `GET /v1/sessions/{id}`, one at a time, while the runs went on (ms). */
  otherKey: Summary;
  /** Another key's requests that failed (any status but 200, or no answer). */
  otherKeyFailed: number;
  loadAverage: { atStart: number; atEnd: number };
  date: string;
  durationS: number;
}

/** Unbounded for the scenario: it sends far more than a key's default limits. */
const OPEN_LIMITS = { requestsPerMinute: 1_000_000, runsAtOnce: 10_000 };

/** Runs `task` for every item, `inFlight` at a time; the results in order. */
async function mapInFlight<T, R>(
  items: readonly T[],
  inFlight: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await task(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, inFlight) }, lane));
  return results;
}

/** `POST /v1/runs?wait=true` as `key`; the run's ids, or undefined when it was not answered. */
async function runAndWait(
  gateway: KeyedGateway,
  key: BenchKey,
  body: Record<string, unknown>,
): Promise<{ runId: string; sessionId: string } | undefined> {
  const response = await fetch(`${gateway.url}/v1/runs?wait=true`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { runId: string; sessionId: string };
  return response.status === 200 ? answer : undefined;
}

/** Another key's requests, one at a time, until `stop`: their latencies and failures. */
function probeOtherKey(gateway: KeyedGateway, key: BenchKey, path: string) {
  const latencies: number[] = [];
  let failed = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = monotonicMs();
      try {
        const response = await fetch(`${gateway.url}${path}`, {
          headers: { authorization: `Bearer ${key.secret}` },
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
        if (response.status === 200) latencies.push(monotonicMs() - started);
        else failed++;
      } catch {
        failed++;
      }
      await sleep(20);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { latencies, failed };
    },
  };
}

/** Runs the scenario on a cluster of its own, closed whatever happened. */
export async function measureGatewayReaders(
  plan: GatewayReadersPlan,
  progress: (text: string) => void,
): Promise<GatewayReaders> {
  const startedAt = performance.now();
  const atStart = loadAverage();
  progress("gatewayReaders: starting Redis, the model, a tool worker, a coordinator and gateways");
  const cluster = await openGatewayCluster(plan.cluster);
  const readers: SseReader[] = [];
  let gateway: KeyedGateway | undefined;
  try {
    gateway = await startKeyedGateway(
      cluster,
      {
        owner: { scopes: ["submit", "read"], ...OPEN_LIMITS },
        watcher: { scopes: ["read"], sessions: "all", ...OPEN_LIMITS },
        other: { scopes: ["submit", "read"], ...OPEN_LIMITS },
      },
      { YIEM_HTTP_MAX_CONNECTIONS: String(plan.cluster.gatewayMaxConnections) },
    );
    const { owner, watcher, other } = gateway.keys as Record<string, BenchKey>;
    const keyed = gateway;
    progress(`gatewayReaders: ${plan.sessions} sessions, one run each`);
    const sessions = await mapInFlight(
      Array.from({ length: plan.sessions }, (_, i) => i),
      plan.inFlight,
      async () => (await runAndWait(keyed, owner as BenchKey, { input: "hello" }))?.sessionId,
    );
    const otherSession = (await runAndWait(keyed, other as BenchKey, { input: "hello" }))
      ?.sessionId;
    if (sessions.some((id) => id === undefined) || !otherSession)
      throw new Error("gatewayReaders: a session's first run was not answered");
    const rssBefore = await readRssMb(keyed.pid);
    const sampler = startRssSampler({ gateway: [keyed.pid] }, plan.rssIntervalMs);
    const opens = (sessions as string[]).flatMap((sessionId) => [
      ...Array.from({ length: plan.stalledPerSession }, () => ({ sessionId, stalled: true })),
      ...Array.from({ length: plan.livePerSession }, () => ({ sessionId, stalled: false })),
    ]);
    progress(
      `gatewayReaders: ${plan.sessions * plan.stalledPerSession} stalled and ${plan.sessions * plan.livePerSession} live readers`,
    );
    const opened = await mapInFlight(opens, plan.inFlight, async (open) => {
      const key = (open.stalled ? owner : watcher) as BenchKey;
      const url = `${keyed.url}/v1/sessions/${open.sessionId}/events`;
      const reader = await openSseReader(url, key.secret, open.stalled);
      readers.push(reader);
      return { ...open, reader };
    });
    await sleep(1000); // the replays of the first runs reach the readers
    const rssReaders = await readRssMb(keyed.pid);
    const probe = probeOtherKey(keyed, other as BenchKey, `/v1/sessions/${otherSession}`);
    progress(`gatewayReaders: ${plan.largeRuns} runs answering ${plan.answerChars} characters`);
    const answer = "x".repeat(plan.answerChars);
    cluster.base.model.push(
      ...Array.from({ length: plan.largeRuns }, () => ({ kind: "text" as const, text: answer })),
    );
    const largeSessions = (sessions as string[]).slice(0, plan.largeRuns);
    const answered = await mapInFlight(largeSessions, plan.inFlight, (sessionId) =>
      runAndWait(keyed, owner as BenchKey, { input: "answer at length", sessionId }),
    );
    const onLarge = opened.filter((o) => !o.stalled && largeSessions.includes(o.sessionId));
    const deadline = monotonicMs() + plan.maxMs;
    while (monotonicMs() < deadline && onLarge.some((o) => o.reader.agentEnds() < 2)) {
      await sleep(200);
    }
    await sleep(1000);
    const rssEnd = await readRssMb(keyed.pid);
    const probed = await probe.stop();
    const peaks = await sampler.stop();
    const live = opened.filter((o) => !o.stalled);
    const stalled = opened.filter((o) => o.stalled);
    return {
      plan,
      stalled: stalled.length,
      live: live.length,
      refused: opened.filter((o) => o.reader.status !== 200).length,
      readersCut: keyed.lines().filter((line) => line.includes('"msg":"event stream reader cut"'))
        .length,
      liveComplete: onLarge.filter((o) => o.reader.agentEnds() >= 2).length,
      liveOnLargeRuns: onLarge.length,
      liveReadMb: live.reduce((sum, o) => sum + o.reader.bytes(), 0) / (1024 * 1024),
      largeRunsAnswered: answered.filter(Boolean).length,
      gatewayRssBeforeMb: rssBefore,
      gatewayRssReadersMb: rssReaders,
      gatewayRssPeakMb: peaks.gateway ?? Number.NaN,
      gatewayRssEndMb: rssEnd,
      otherKey: summarize(probed.latencies),
      otherKeyFailed: probed.failed,
      loadAverage: { atStart, atEnd: loadAverage() },
      date: new Date().toISOString(),
      durationS: Math.round((performance.now() - startedAt) / 100) / 10,
    };
  } finally {
    for (const reader of readers) reader.close();
    await gateway?.close();
    await cluster.close();
  }
}
