import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../../test/support/processes.js";
import type { AcksPhase, ClusterScenario } from "../measurements/clusterSpread.js";
import type { FollowUpBurst } from "../measurements/followUpBurst.js";
import type { Sessions, SessionsConfiguration } from "../measurements/sessions.js";
import { round } from "../sampling/stats.js";
import { performanceMarkdown } from "./performanceDoc.js";
import type { BenchResults } from "./results.js";
import { appendToHistory } from "./runHistory.js";

/** A headline figure: its key in `results.json`, its unit and what it means. */
export interface Headline {
  key: keyof BenchResults;
  unit: string;
  meaning: string;
}

/** The headline figures in table order. */
export const HEADLINES: Headline[] = [
  {
    key: "remoteCallP50Ms",
    unit: "ms",
    meaning:
      "one no-op call coordinator → tool worker process → coordinator through `executeToolCalls` + `createRemoteExecutor` as the coordinator runs it: start/end events sent without awaiting each reply (`createEventPublisher`), result appended to the transcript (`SessionStore.appendMany`) without awaiting the reply, which the session's next write awaits (median)",
  },
  { key: "remoteCallP99Ms", unit: "ms", meaning: "the same, 99th percentile" },
  {
    key: "rawBullmqP50Ms",
    unit: "ms",
    meaning:
      "plain BullMQ `queue.add` → `job.waitUntilFinished` with a no-op worker process, same payload size and concurrency (median)",
  },
  { key: "rawBullmqP99Ms", unit: "ms", meaning: "the same, 99th percentile" },
  {
    key: "inProcessCallP50Ms",
    unit: "ms",
    meaning:
      "the same no-op call through `executeToolCalls` with the default in-process executor, events and persistence included (median)",
  },
  {
    key: "fanout8P50Ms",
    unit: "ms",
    meaning:
      "a batch of eight parallel no-op calls through the remote path, events and persistence (one `appendMany`, its reply awaited by the next write) included (median)",
  },
  {
    key: "throughputCallsPerS",
    unit: "calls/s",
    meaning: "sustained remote no-op calls, 64 concurrent sessions, two tool worker processes",
  },
  {
    key: "rawBullmqJobsPerS",
    unit: "jobs/s",
    meaning: "sustained raw BullMQ jobs, 64 concurrent loops, two plain worker processes",
  },
  {
    key: "eventRelayP50Ms",
    unit: "ms",
    meaning:
      "a partial result emitted by a tool on a worker → received by `streamSessionEvents` here (median, monotonic clock)",
  },
  {
    key: "followUpCommandsBurst200",
    unit: "commands",
    meaning:
      "Redis commands (`INFO stats` `total_commands_processed`, whole server) per follow-up while a burst of 200 follow-ups (`followUp: true`, one `queue.addBulk`) to one fresh session is answered by a real coordinator process",
  },
  {
    key: "followUpCommandsBurst2000",
    unit: "commands",
    meaning:
      "the same for a burst of 2,000 follow-ups (the plain messages sent to other sessions meanwhile included)",
  },
  {
    key: "followUpCommandsRatio",
    unit: "",
    meaning: "commands per follow-up, burst of 2,000 / burst of 200 (target ≤ 1.5)",
  },
  {
    key: "otherSessionDuringBurstP50Ms",
    unit: "ms",
    meaning:
      "a plain message to another, fresh session sent while the burst of 2,000 is answered: `queue.add` → its `completed` event (`QueueEvents`), messages one after another (median)",
  },
  {
    key: "otherSessionDuringBurstP99Ms",
    unit: "ms",
    meaning: "the same, 99th percentile (target ≤ 250 ms)",
  },
  {
    key: "sessionsCoordinatorCpuMsPerRun",
    unit: "ms",
    meaning:
      "CPU time (`/proc/<pid>/stat` user + system) of one compiled coordinator process (`node apps/coordinator/dist/main.js`, `YIEM_COORDINATOR_CONCURRENCY=2000`) per run, while 2,000 fresh sessions started at once (one `queue.addBulk`) each run one request: a model call asking for two parallel tool calls (run by two compiled tool workers), then a model call that answers; the scripted model answers after 200 ms",
  },
  {
    key: "sessionsCoordinatorCpuMsPerRunDefault",
    unit: "ms",
    meaning: "the same on a coordinator of the default concurrency",
  },
  {
    key: "sessionsRawPartsCpuMs",
    unit: "ms",
    meaning:
      "the raw parts of such a run measured alone: 2 × the `openai` SDK's CPU per streamed chat completion (a process of its own, the coordinator's own request bodies, same scripted model) + 2 × the CPU of one plain BullMQ add/complete pair (producer + plain worker processes)",
  },
  {
    key: "sessionsCpuRatio",
    unit: "",
    meaning: "coordinator CPU per run ÷ its raw parts, concurrency 2,000 (target ≤ 1.5)",
  },
  {
    key: "sessionsCpuRatioDefault",
    unit: "",
    meaning: "the same at the default concurrency",
  },
  {
    key: "sessionsCoordinatorRssPeakMb",
    unit: "MB",
    meaning:
      "the coordinator's highest RSS (`VmRSS`, sampled every 100 ms, MiB) during the 2,000 sessions at concurrency 2,000 (target ≤ 300)",
  },
  {
    key: "sessionsHealthzP99Ms",
    unit: "ms",
    meaning:
      "`GET /healthz` on that coordinator from a process of its own, one probe every 50 ms during the load, 99th percentile (target ≤ 200)",
  },
  {
    key: "sessionsWallS",
    unit: "s",
    meaning:
      "`queue.addBulk` sent → the last of the 2,000 jobs completed, concurrency 2,000 (one run's ideal: 2 model answers × 200 ms = 0.4 s)",
  },
  {
    key: "sessionsWallSDefault",
    unit: "s",
    meaning: "the same at the default concurrency (its ideal: ⌈2,000 / concurrency⌉ × 0.4 s)",
  },
  {
    key: "clusterMaxMasterSharePct",
    unit: "%",
    meaning:
      "on a 3+3 Redis Cluster (one coordinator, two tool workers, `YIEM_REPLICA_ACKS=1`, the default there), while 400 runs to fresh sessions are answered 32 at a time (and 80 one at a time): the largest master's share of the data commands (`INFO commandstats` per master, topology housekeeping left out) (target ≤ 50)",
  },
  {
    key: "clusterRunP50Ms",
    unit: "ms",
    meaning:
      "one run on that cluster (two parallel no-op tool calls, then the answer): `YiemClient.send` → `waitForResponse` resolved, 32 in flight, session writes followed by `WAIT 1 250` (median)",
  },
  { key: "clusterRunP99Ms", unit: "ms", meaning: "the same, 99th percentile" },
  { key: "clusterRunsPerS", unit: "runs/s", meaning: "runs answered per second, the same load" },
  {
    key: "clusterRunP50MsNoWait",
    unit: "ms",
    meaning:
      "the same on a cluster of its own with `YIEM_REPLICA_ACKS=0` (no `WAIT`), measured in blocks alternating with the other (median)",
  },
  { key: "clusterRunP99MsNoWait", unit: "ms", meaning: "the same, 99th percentile" },
  {
    key: "clusterRunsPerSNoWait",
    unit: "runs/s",
    meaning: "runs answered per second with `YIEM_REPLICA_ACKS=0`",
  },
  { key: "cores", unit: "", meaning: "`os.cpus().length`" },
  { key: "node", unit: "", meaning: "Node.js version" },
  { key: "redis", unit: "", meaning: "Redis version (INFO server `redis_version`)" },
  { key: "bullmq", unit: "", meaning: "BullMQ version" },
  { key: "date", unit: "", meaning: "when this run started" },
];

/** A headline's value as text. */
export function headlineValue(results: BenchResults, headline: Headline): string {
  const value = results[headline.key];
  if (value === null) return "n/a";
  return typeof value === "number" ? String(round(value, 3)) : String(value);
}

/** Rows of text as an aligned plain-text table, the first row as header. */
export function textTable(rows: string[][]): string {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? "").length)));
  const line = (row: string[]) =>
    row
      .map((cell, col) => cell.padEnd(widths?.[col] ?? 0))
      .join("  ")
      .trimEnd();
  const [header = [], ...body] = rows;
  const rule = (widths ?? []).map((w) => "-".repeat(w)).join("  ");
  return [line(header), rule, ...body.map(line)].join("\n");
}

/** Prints the headline table and the target checks. */
export function printReport(results: BenchResults): void {
  const rows = [["figure", "value", "unit"]];
  for (const headline of HEADLINES)
    rows.push([headline.key, headlineValue(results, headline), headline.unit]);
  console.log(`\n${textTable(rows)}\n`);
  const targets = [["target", "measured", "limit", "met", ""]];
  for (const t of results.targets) {
    targets.push([
      t.target,
      `${t.actual} ${t.unit}`,
      `${t.limit} ${t.unit}`,
      t.met ? "yes" : "NO",
      t.met ? t.headroom : t.shortfall,
    ]);
  }
  console.log(`${textTable(targets)}\n`);
  const { calls, fanout } = results.details;
  const change = [["before this change → now (p50)", "before", "now", "unit"]];
  change.push(["remote call", fmt(calls.remoteBefore.p50), fmt(calls.remote.p50), "ms"]);
  change.push([
    "remote call, append awaited → pipelined",
    fmt(calls.remoteAppendAwaited.p50),
    fmt(calls.remote.p50),
    "ms",
  ]);
  change.push(["fan-out of eight", fmt(fanout.before.p50), fmt(fanout.remote.p50), "ms"]);
  console.log(`${textTable(change)}\n`);
  printFollowUpBurst(results.details.followUpBurst);
  printSessions(results.details.sessions);
  printCluster(results.details.cluster);
}

function fmtMs(value: number): string {
  return `${round(value, 1)} ms`;
}

/** Prints the follow-up burst figures: commands per follow-up, wall times, other sessions' wait. */
export function printFollowUpBurst(f: FollowUpBurst): void {
  const bursts = [["follow-up burst", "answered", "commands/follow-up", "before", "wall time"]];
  for (const [burst, before] of [
    [f.small, f.before.small],
    [f.large, f.before.large],
  ] as const) {
    bursts.push([
      `${burst.size} follow-ups`,
      `${burst.answered}/${burst.size}`,
      fmt(round(burst.commandsPerFollowUp, 1)),
      String(before),
      `${round(burst.wallMs / 1000, 2)} s`,
    ]);
  }
  const ratioBefore = f.before.large / f.before.small;
  bursts.push([
    "ratio large/small (≤ 1.5)",
    "",
    fmt(round(f.ratio, 2)),
    fmt(round(ratioBefore, 2)),
    "",
  ]);
  console.log(`${textTable(bursts)}\n`);
  const waits = [["plain message to another session", "n", "median", "p99", "max"]];
  const wait = (name: string, s: FollowUpBurst["idle"]) => [
    name,
    String(s.count),
    fmtMs(s.p50),
    fmtMs(s.p99),
    fmtMs(s.max),
  ];
  waits.push(wait("idle cluster", f.idle));
  waits.push(wait(`during the ${f.large.size} burst (≤ 250 ms)`, f.otherSession));
  console.log(`${textTable(waits)}`);
  console.log(
    `answered while the burst was still open: ${f.probesDuringBurst}/${f.otherSession.count}; unanswered: ${f.unanswered}`,
  );
  const each = f.otherSessionSamples.map(
    (ms, i) => `${round(ms, 0)} (${f.otherSessionWaitingAhead[i] ?? "?"} ahead)`,
  );
  console.log(`each in the order sent, ms (jobs waiting ahead of it): ${each.join(", ")}`);
  console.log(
    `commands per plain message on the idle cluster: ${round(f.commandsPerMessage, 1)}\n`,
  );
}

function fmt(value: number): string {
  return String(round(value, 3));
}

/** One row of the sessions table: a figure for both configurations. */
function sessionsRow(
  s: Sessions,
  name: string,
  value: (c: SessionsConfiguration) => string,
  unit: string,
): string[] {
  return [name, value(s.large), value(s.standard), unit];
}

/** The rows of the sessions table (figure × configuration). */
function sessionsRows(s: Sessions): string[][] {
  const n = (v: number, digits = 2) => String(round(v, digits));
  return [
    sessionsRow(s, "sessions answered", (c) => `${c.answered}/${c.sessions}`, ""),
    sessionsRow(s, "model calls per run", (c) => n(c.modelCallsPerRun), ""),
    sessionsRow(s, "coordinator CPU per run", (c) => n(c.coordinator.cpuMsPerRun), "ms"),
    sessionsRow(s, "  ÷ raw parts (≤ 1.5)", (c) => n(c.cpuRatio), ""),
    sessionsRow(s, "workers CPU per run (2 summed)", (c) => n(c.workers.cpuMsPerRun), "ms"),
    sessionsRow(s, "redis-server CPU per run", (c) => n(c.redis.cpuMsPerRun), "ms"),
    sessionsRow(s, "Redis commands per run", (c) => n(c.redisCommandsPerRun, 1), ""),
    sessionsRow(
      s,
      "bench process CPU per run (model + client)",
      (c) => n(c.benchCpuMsPerRun),
      "ms",
    ),
    sessionsRow(
      s,
      "machine cores busy (all processes)",
      (c) => `${n(c.machineBusyCores)}/${c.cores}`,
      "",
    ),
    sessionsRow(s, "coordinator RSS peak (≤ 300)", (c) => n(c.coordinator.rssPeakMb, 0), "MB"),
    sessionsRow(s, "workers RSS peak (summed)", (c) => n(c.workers.rssPeakMb, 0), "MB"),
    sessionsRow(s, "redis-server RSS peak", (c) => n(c.redis.rssPeakMb, 0), "MB"),
    sessionsRow(s, "/healthz p50", (c) => n(c.healthz.p50, 1), "ms"),
    sessionsRow(s, "/healthz p99 (≤ 200)", (c) => n(c.healthz.p99, 1), "ms"),
    sessionsRow(s, "/healthz max", (c) => n(c.healthz.max, 1), "ms"),
    sessionsRow(
      s,
      "/healthz probes (failed)",
      (c) => `${c.healthz.count} (${c.healthzFailed})`,
      "",
    ),
    sessionsRow(s, "wall time", (c) => n(c.wallMs / 1000), "s"),
    sessionsRow(s, "  ideal for the slots", (c) => n(c.slotBoundIdealMs / 1000), "s"),
    sessionsRow(s, "run latency p50", (c) => n(c.runLatency.p50 / 1000), "s"),
    sessionsRow(s, "run latency p99", (c) => n(c.runLatency.p99 / 1000), "s"),
  ];
}

/** Prints the sessions figures: both configurations side by side, then the raw anchors. */
export function printSessions(s: Sessions): void {
  const header = [
    `${s.large.sessions} sessions`,
    `concurrency ${s.large.concurrency}`,
    `concurrency ${s.standard.concurrency} (default)`,
    "unit",
  ];
  console.log(`${textTable([header, ...sessionsRows(s)])}
`);
  console.log(
    `one run's ideal: 2 model answers × ${s.modelDelayMs} ms = ${round(s.idealMs / 1000, 2)} s`,
  );
  console.log(
    `raw anchors: openai SDK ${round(s.sdk.cpuMsPerCall, 3)} ms CPU per streamed completion (${s.sdk.calls} calls, ${s.sdk.inFlight} in flight, ${round(s.sdk.chunksPerCall, 1)} chunks each); plain BullMQ add/complete pair ${round(s.bullmq.pairCpuMsPerJob, 3)} ms (producer ${round(s.bullmq.producerCpuMsPerJob, 3)} + workers ${round(s.bullmq.workerCpuMsPerJob, 3)}; ${s.bullmq.jobs} jobs, ${s.bullmq.inFlight} in flight)`,
  );
  console.log(`raw parts of a run (2 SDK calls + 2 pairs): ${round(s.rawPartsCpuMs, 3)} ms CPU\n`);
}

/** One row of the cluster table: a figure without and with `WAIT`, and their ratio. */
function clusterRow(
  name: string,
  value: (phase: AcksPhase) => number,
  without: AcksPhase,
  withWait: AcksPhase,
  digits = 1,
): string[] {
  const a = value(without);
  const b = value(withWait);
  const ratio = a ? fmt(round(b / a, 2)) : "";
  return [name, fmt(round(a, digits)), fmt(round(b, digits)), ratio];
}

/** Prints the Redis Cluster figures: runs without and with `WAIT`, then the spread per master. */
export function printCluster(c: ClusterScenario): void {
  if (!c.measured) {
    console.log(`Redis Cluster: skipped (${c.reason})\n`);
    return;
  }
  const a = c.withoutWait;
  const b = c.withWait;
  const rows = [
    ["Redis Cluster, one run", "YIEM_REPLICA_ACKS=0", "=1 (WAIT 1 250)", "ratio"],
    [
      `runs answered (${a.runs} at ${a.inFlight} in flight)`,
      `${a.answered}/${a.runs}`,
      `${b.answered}/${b.runs}`,
      "",
    ],
    clusterRow("run latency p50 (ms)", (p) => p.latency.p50, a, b),
    clusterRow("run latency p99 (ms)", (p) => p.latency.p99, a, b),
    clusterRow("runs/s", (p) => p.runsPerS, a, b, 0),
    clusterRow("one at a time: latency p50 (ms)", (p) => p.soloLatency.p50, a, b),
    clusterRow("one at a time: latency p99 (ms)", (p) => p.soloLatency.p99, a, b),
    clusterRow("data commands per run", (p) => p.commandsPerRun, a, b),
    clusterRow("WAIT per run", (p) => p.waitsPerRun, a, b),
  ];
  console.log(`${textTable(rows)}\n`);
  const spread = [
    ["master, by its slots", "holds", "ACKS=0 commands", "share", "ACKS=1 commands", "share"],
  ];
  b.spread.masters.forEach((m, i) => {
    const m0 = a.spread.masters[i];
    spread.push([
      m.slots,
      m.holds.join(" ") || "sessions only",
      String(m0?.commands ?? ""),
      m0 ? `${round(m0.share * 100, 1)} %` : "",
      String(m.commands),
      `${round(m.share * 100, 1)} %`,
    ]);
  });
  console.log(textTable(spread));
  console.log(
    `largest master's share (≤ 50 %): ${round(a.spread.maxShare * 100, 1)} % without WAIT, ${round(b.spread.maxShare * 100, 1)} % with\n`,
  );
}

/** Writes `bench/results.json` and `docs/PERFORMANCE.md`; returns their paths. */
export async function writeResults(results: BenchResults): Promise<string[]> {
  const json = join(repoRoot, "bench", "results.json");
  const doc = join(repoRoot, "docs", "PERFORMANCE.md");
  const historyPath = join(repoRoot, "bench", "history.json");
  await writeFile(json, `${JSON.stringify(results, null, 2)}\n`);
  const history = await appendToHistory(historyPath, results);
  const meanings = new Map(HEADLINES.map((h) => [String(h.key), h.meaning]));
  await writeFile(doc, performanceMarkdown(results, meanings, history));
  return [json, historyPath, doc];
}
