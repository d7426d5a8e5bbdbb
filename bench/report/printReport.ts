import type { Breakdown, RawPhases, RemotePhases } from "../measurements/breakdown.js";
import type { CallLatency } from "../measurements/callLatency.js";
import type { ChildRunOverhead } from "../measurements/childRuns.js";
import type { AcksPhase, ClusterScenario } from "../measurements/clusterSpread.js";
import type { EventRelay } from "../measurements/eventRelay.js";
import type { FanoutLatency } from "../measurements/fanout.js";
import type { FollowUpBurst } from "../measurements/followUpBurst.js";
import type { McpOverhead } from "../measurements/mcpOverhead.js";
import {
  cpuRatioOf,
  rawParts,
  type Sessions,
  type SessionsConfiguration,
} from "../measurements/sessions.js";
import type { Sessions10k } from "../measurements/sessions10k.js";
import type { ThroughputPair } from "../measurements/throughput.js";
import { round, type Summary } from "../sampling/stats.js";
import { HEADLINES, headlineValue } from "./headlines.js";
import {
  type BenchResults,
  NAMED_AGENT_RATIO_LIMIT,
  runsPerS,
  SESSIONS_CPU_RATIO_LIMIT,
  SESSIONS_HEALTHZ_P99_LIMIT_MS,
  SESSIONS_RSS_LIMIT_MB,
} from "./results.js";
import { sessionsColumns } from "./sessionsColumns.js";

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
  if (results.details.mcp) printMcpOverhead(results.details.mcp);
  if (results.details.childRuns) printChildRuns(results.details.childRuns);
  printFollowUpBurst(results.details.followUpBurst);
  printSessions(results.details.sessions);
  printCluster(results.details.cluster);
}

function fmtMs(value: number): string {
  return `${round(value, 1)} ms`;
}

/** Prints the follow-up burst figures: commands per follow-up, wall times, other sessions' wait. */
export function printFollowUpBurst(f: FollowUpBurst): void {
  const bursts = [["follow-up burst", "answered", "commands/follow-up", "wall time"]];
  for (const burst of [f.small, f.large]) {
    bursts.push([
      `${burst.size} follow-ups`,
      `${burst.answered}/${burst.size}`,
      fmt(round(burst.commandsPerFollowUp, 1)),
      `${round(burst.wallMs / 1000, 2)} s`,
    ]);
  }
  bursts.push(["ratio large/small (≤ 1.5)", "", fmt(round(f.ratio, 2)), ""]);
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

/** One row of the sessions table: a figure for every load. */
function sessionsRow(
  s: Sessions,
  name: string,
  value: (c: SessionsConfiguration) => string,
  unit: string,
): string[] {
  return [name, ...sessionsColumns(s).map((col) => value(col.config)), unit];
}

/** The rows of the sessions table (figure × load). */
function sessionsRows(s: Sessions): string[][] {
  const n = (v: number | undefined, digits = 2) =>
    v === undefined ? "–" : String(round(v, digits));
  const ratio = `  ÷ raw parts, producer side (≤ ${SESSIONS_CPU_RATIO_LIMIT})`;
  return [
    sessionsRow(s, "sessions answered", (c) => `${c.answered}/${c.sessions}`, ""),
    sessionsRow(s, "model calls per run", (c) => n(c.modelCallsPerRun), ""),
    sessionsRow(s, "coordinator CPU per run (summed)", (c) => n(c.coordinator.cpuMsPerRun), "ms"),
    sessionsRow(s, ratio, (c) => n(cpuRatioOf(s, c)), ""),
    sessionsRow(s, "workers CPU per run (2 summed)", (c) => n(c.workers.cpuMsPerRun), "ms"),
    sessionsRow(s, "redis-server CPU per run", (c) => n(c.redis.cpuMsPerRun), "ms"),
    sessionsRow(s, "Redis commands per run", (c) => n(c.redisCommandsPerRun, 1), ""),
    sessionsRow(
      s,
      "bench process CPU per run (model + client)",
      (c) => n(c.benchCpuMsPerRun),
      "ms",
    ),
    sessionsRow(s, "client process CPU per run", (c) => n(c.senderCpuMsPerRun), "ms"),
    sessionsRow(
      s,
      "machine cores busy (all processes)",
      (c) => `${n(c.machineBusyCores)}/${c.cores}`,
      "",
    ),
    sessionsRow(
      s,
      `coordinator RSS peak, summed (≤ ${SESSIONS_RSS_LIMIT_MB} each)`,
      (c) => n(c.coordinator.rssPeakMb, 0),
      "MB",
    ),
    sessionsRow(s, "workers RSS peak (summed)", (c) => n(c.workers.rssPeakMb, 0), "MB"),
    sessionsRow(s, "redis-server RSS peak", (c) => n(c.redis.rssPeakMb, 0), "MB"),
    sessionsRow(s, "/healthz p50", (c) => n(c.healthz.p50, 1), "ms"),
    sessionsRow(
      s,
      `/healthz p99 (≤ ${SESSIONS_HEALTHZ_P99_LIMIT_MS})`,
      (c) => n(c.healthz.p99, 1),
      "ms",
    ),
    sessionsRow(s, "/healthz max", (c) => n(c.healthz.max, 1), "ms"),
    sessionsRow(
      s,
      "main loop silent at probe p50 / p99",
      (c) => `${n(c.mainLoopSilence?.p50, 0)} / ${n(c.mainLoopSilence?.p99, 0)}`,
      "ms",
    ),
    sessionsRow(
      s,
      "/healthz probes (failed)",
      (c) => `${c.healthz.count} (${c.healthzFailed})`,
      "",
    ),
    sessionsRow(s, "wall time", (c) => n(c.wallMs / 1000), "s"),
    sessionsRow(s, "runs/s", (c) => n(runsPerS(c), 0), ""),
    sessionsRow(s, "  ideal for the slots", (c) => n(c.slotBoundIdealMs / 1000), "s"),
    sessionsRow(s, "run latency p50", (c) => n(c.runLatency.p50 / 1000), "s"),
    sessionsRow(s, "run latency p99", (c) => n(c.runLatency.p99 / 1000), "s"),
  ];
}

/** Prints the named against unnamed runs, when measured. */
function printAgents(s: Sessions): void {
  const a = s.agents;
  if (!a) return;
  console.log(
    `named agent (YIEM_AGENTS) vs unnamed, ${a.rounds} rounds of ${a.blockSessions} each, one coordinator of ${a.concurrency}: unnamed ${round(a.unnamed.cpuMsPerRun, 3)} ms CPU per run (${a.unnamed.answered}/${a.unnamed.runs} answered), named ${round(a.named.cpuMsPerRun, 3)} ms (${a.named.answered}/${a.named.runs}); named ÷ unnamed ${round(a.ratio, 2)} (≤ ${NAMED_AGENT_RATIO_LIMIT})`,
  );
}

/** Prints the sessions figures: every load side by side, then the raw anchors. */
export function printSessions(s: Sessions): void {
  const header = [
    `${s.large.sessions} sessions`,
    ...sessionsColumns(s).map((c) => c.title),
    "unit",
  ];
  console.log(`${textTable([header, ...sessionsRows(s)])}
`);
  console.log(
    `one run's ideal: 2 model answers × ${s.modelDelayMs} ms = ${round(s.idealMs / 1000, 2)} s`,
  );
  printAgents(s);
  console.log(
    `raw anchors: openai SDK ${round(s.sdk.cpuMsPerCall, 3)} ms CPU per streamed completion${s.sdk.rounds ? ` (mean of ${s.sdk.rounds.map((r) => round(r, 3)).join(" / ")})` : ""} (${s.sdk.calls} calls, ${s.sdk.inFlight} in flight, ${round(s.sdk.chunksPerCall, 1)} chunks each); plain BullMQ add/complete: producer ${round(s.bullmq.producerCpuMsPerJob, 3)} ms, plain workers ${round(s.bullmq.workerCpuMsPerJob, 3)} ms (${s.bullmq.jobs} jobs, ${s.bullmq.inFlight} in flight)`,
  );
  if (s.sdkYiemFetch) {
    const ratio = s.sdkYiemFetch.cpuMsPerCall / s.sdk.cpuMsPerCall;
    console.log(
      `the same SDK sending with Yiem's createLlmFetch (the coordinator's client): ${round(s.sdkYiemFetch.cpuMsPerCall, 3)} ms CPU per streamed completion (${round(ratio, 2)} × the default fetch; mean of ${(s.sdkYiemFetch.rounds ?? []).map((r) => round(r, 3)).join(" / ")})`,
    );
  }
  const raw = rawParts(s);
  console.log(
    `raw parts of a run, producer side (2 SDK calls + 2 producer sides): ${round(raw.producerSide, 3)} ms CPU; the old figure with the plain workers' side too: ${round(raw.bothSides, 3)} ms\n`,
  );
}

/** Prints the 10,000-sessions figures: the live load, then the parked runs. */
export function printSessions10k(t: Sessions10k): void {
  const l = t.live;
  const n = (v: number, digits = 1) => String(round(v, digits));
  console.log(
    `${l.sessions} live sessions on one coordinator of ${l.concurrency}: ${l.answered}/${l.sessions} answered (${l.unanswered} not), wall ${n(l.wallMs / 1000, 2)} s (${n(runsPerS(l), 0)} runs/s), coordinator CPU ${n(l.coordinator.cpuMsPerRun, 2)} ms per run, RSS peak ${n(l.coordinator.rssPeakMb, 0)} MB (≤ 400), /healthz p50 ${n(l.healthz.p50)} ms, p99 ${n(l.healthz.p99)} ms (≤ 200), max ${n(l.healthz.max)} ms, ${l.healthz.count} probes (${l.healthzFailed} failed)`,
  );
  const p = t.parked;
  console.log(
    `${p.runs} runs parked for approval (${p.pendingApprovals} calls waiting, parked in ${n(p.parkMs / 1000, 1)} s): coordinator heap after GC ${n(p.before.heapUsedMb)} → ${n(p.parked.heapUsedMb)} MB (+${n(p.heldHeapMb)} MB, ${n(p.heldHeapKbPerRun, 2)} KiB per run; ≤ 20 MB), RSS ${n(p.before.rssMb, 0)} → ${n(p.parked.rssMb, 0)} MB (+${n(p.heldRssMb)} MB); idle while parked: coordinator CPU ${n(p.idle.coordinatorCpuPercent)} % of a core, Redis ${n(p.idle.redisCommandsPerS, 0)} commands/s (${(p.idle.topCommandsPerS ?? []).map((c) => `${c.command} ${n(c.perS, 0)}`).join(", ")})\n`,
  );
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

/** Latency summaries as a text table: case, n, p50, p90, p99, max (ms). */
function summaryTable(title: string, cases: Array<[string, Summary]>): string {
  const rows = [[title, "n", "p50", "p90", "p99", "max"]];
  for (const [name, s] of cases)
    rows.push([name, String(s.count), fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max)]);
  return textTable(rows);
}

/** The line under a remote-versus-raw table: the ratio of their medians and its target. */
function remoteOverRawLine(remote: Summary, raw: Summary): string {
  return `remote p50 ÷ raw p50: ${fmt(round(remote.p50 / raw.p50, 2))} (≤ 1.3)\n`;
}

/** Prints the single-call latencies and the remote ÷ raw ratio at p50. */
export function printCallLatency(c: CallLatency): void {
  const cases: Array<[string, Summary]> = [
    ["remote call", c.remote],
    ["raw BullMQ job", c.raw],
    ["in-process call (events + persistence)", c.inProcess],
    ["in-process pipeline alone", c.inProcessBare],
  ];
  console.log(summaryTable("one no-op call (ms)", cases));
  console.log(remoteOverRawLine(c.remote, c.raw));
}

/** Prints an MCP call's latency directly through the SDK and as a Yiem tool, and their ratios. */
export function printMcpOverhead(m: McpOverhead): void {
  const cases: Array<[string, Summary]> = [
    ["MCP SDK client, directly", m.direct],
    ["Yiem tool, in-process lifecycle", m.lifecycle],
    ["Yiem tool, remote call to a worker", m.remote],
  ];
  console.log(summaryTable("one MCP echo call over stdio (ms)", cases));
  for (const [name, s] of [
    ["lifecycle", m.lifecycle],
    ["remote", m.remote],
  ] as const) {
    const p50 = fmt(round(s.p50 / m.direct.p50, 2));
    const p99 = fmt(round(s.p99 / m.direct.p99, 2));
    const extra = fmt(round(s.p50 - m.direct.p50));
    console.log(`${name} ÷ direct: p50 ${p50}, p99 ${p99} (+${extra} ms at p50)`);
  }
  console.log("");
}

/** Prints a child run against a remote-call run: latencies, the overhead, CPU per run. */
export function printChildRuns(c: ChildRunOverhead): void {
  const cases: Array<[string, Summary]> = [
    ["run calling agent__child once", c.child.latency],
    ["run calling one remote no-op tool", c.remote.latency],
  ];
  console.log(summaryTable("one run, one at a time (ms)", cases));
  console.log(
    `child − remote at p50: ${fmt(round(c.overheadP50Ms, 2))} ms; answered ${c.child.answered}/${c.child.runs} and ${c.remote.answered}/${c.remote.runs}`,
  );
  console.log(
    `coordinator CPU per run: child ${fmt(round(c.child.cpuMsPerRun, 2))} ms, remote ${fmt(round(c.remote.cpuMsPerRun, 2))} ms (${fmt(round(c.cpuRatio, 2))}×)\n`,
  );
}

/** Prints the fan-out of eight against eight raw jobs at once, and their ratio at p50. */
export function printFanout(f: FanoutLatency): void {
  const cases: Array<[string, Summary]> = [
    ["fan-out of eight, remote", f.remote],
    ["eight raw BullMQ jobs at once", f.raw],
  ];
  console.log(summaryTable("batch of eight (ms)", cases));
  console.log(remoteOverRawLine(f.remote, f.raw));
}

/** Prints the event relay latencies and the updates that did not arrive. */
export function printEventRelay(r: EventRelay): void {
  const cases: Array<[string, Summary]> = [
    ["streamSessionEvents", r.stream],
    ["plain pub/sub subscriber", r.pubsub],
  ];
  console.log(summaryTable("partial result relayed (ms)", cases));
  console.log(`updates that did not arrive within 2 s: ${r.missed}\n`);
}

/** Prints the median phases of a remote call beside those of a raw job. */
export function printBreakdown(b: Breakdown): void {
  const rawValue = (phases: RawPhases, key: keyof RemotePhases) =>
    key in phases ? fmt(phases[key as keyof RawPhases]) : "–";
  const rows = [["phase (median ms)", "Yiem", "raw BullMQ", "raw, worker idle first"]];
  for (const key of Object.keys(b.remote) as Array<keyof RemotePhases>)
    rows.push([key, fmt(b.remote[key]), rawValue(b.raw, key), rawValue(b.rawAfterIdle, key)]);
  console.log(`${textTable(rows)}\n`);
}

/** Prints sustained throughput and what a call cost, Yiem against raw BullMQ. */
export function printThroughput(t: ThroughputPair): void {
  const row = (name: string, pick: (side: ThroughputPair["yiem"]) => number, digits = 0) => [
    name,
    fmt(round(pick(t.yiem), digits)),
    fmt(round(pick(t.raw), digits)),
  ];
  const rows = [
    ["sustained load", "Yiem", "raw BullMQ"],
    row("calls/s", (s) => s.callsPerS),
    row("latency p50 (ms)", (s) => s.latency.p50, 3),
    row("Redis commands per call", (s) => s.redisCommandsPerCall, 1),
    row("Redis CPU per call (µs)", (s) => s.redisCpuUsPerCall),
    row("coordinator-side CPU per call (µs)", (s) => s.coordinatorCpuUsPerCall),
    row("worker CPU per call (µs)", (s) => s.workerCpuUsPerCall),
  ];
  console.log(textTable(rows));
  const ratio = t.yiem.callsPerS / t.raw.callsPerS;
  console.log(`Yiem calls/s ÷ raw jobs/s: ${fmt(round(ratio, 2))} (≥ 0.5)\n`);
}
