import type { Breakdown } from "../measurements/breakdown.js";
import type { CallLatency } from "../measurements/callLatency.js";
import type { ChildRunOverhead } from "../measurements/childRuns.js";
import type { ClusterScenario, ClusterSpread } from "../measurements/clusterSpread.js";
import type { EventRelay } from "../measurements/eventRelay.js";
import type { FanoutLatency } from "../measurements/fanout.js";
import type { Flow } from "../measurements/flow.js";
import type { FollowUpBurst } from "../measurements/followUpBurst.js";
import type { Gateway } from "../measurements/gateway.js";
import type { GatewayReaders } from "../measurements/gatewayReaders.js";
import type { McpOverhead } from "../measurements/mcpOverhead.js";
import type { NewSession } from "../measurements/newSession.js";
import {
  cpuRatioOf,
  rawParts,
  type Sessions,
  type SessionsConfiguration,
} from "../measurements/sessions.js";
import type { ThroughputPair } from "../measurements/throughput.js";
import type { Plan } from "../plan.js";
import type { BenchEnvironment } from "../sampling/environment.js";
import { round } from "../sampling/stats.js";

/** Everything one run measured, before it is turned into headline figures. */
export interface Measured {
  environment: BenchEnvironment;
  plan: Plan;
  method: Record<string, string | number>;
  calls: CallLatency;
  fanout: FanoutLatency;
  relay: EventRelay;
  breakdown: Breakdown;
  throughput: ThroughputPair;
  /** An MCP call's overhead (absent in runs before it joined the full run). */
  mcp?: McpOverhead;
  /** A child run against a plain remote call (absent in runs before it joined the full run). */
  childRuns?: ChildRunOverhead;
  followUpBurst: FollowUpBurst;
  sessions: Sessions;
  /** Runs on a 3+3 Redis Cluster with and without replica acknowledgements, or why not. */
  cluster: ClusterScenario;
  durationS: number;
  /** Set by `--quick` (a much smaller plan; not comparable with a full run). */
  quick?: true;
}

/** One target and whether this run met it. */
export interface TargetCheck {
  target: string;
  /** The measured value. */
  actual: number;
  /** The value the target allows (an upper bound unless `atLeast`). */
  limit: number;
  atLeast: boolean;
  unit: string;
  met: boolean;
  /** How far off the target is, in words ("" when met). */
  shortfall: string;
  /** How much room is left, in words ("" when missed). */
  headroom: string;
}

/** The figures `bench/results.json` holds: the headline numbers first, then the details. */
export interface BenchResults {
  remoteCallP50Ms: number;
  remoteCallP99Ms: number;
  rawBullmqP50Ms: number;
  rawBullmqP99Ms: number;
  inProcessCallP50Ms: number;
  fanout8P50Ms: number;
  throughputCallsPerS: number;
  rawBullmqJobsPerS: number;
  eventRelayP50Ms: number;
  followUpCommandsBurst200: number;
  followUpCommandsBurst2000: number;
  followUpCommandsRatio: number;
  otherSessionDuringBurstP50Ms: number;
  otherSessionDuringBurstP99Ms: number;
  sessionsCoordinatorCpuMsPerRun: number;
  sessionsCoordinatorCpuMsPerRunDefault: number;
  sessionsRawPartsCpuMs: number;
  sessionsRawPartsBothSidesCpuMs: number;
  sessionsCpuRatio: number;
  sessionsCpuRatioDefault: number;
  sessionsCoordinatorRssPeakMb: number;
  sessionsHealthzP50Ms: number;
  sessionsHealthzP99Ms: number;
  /** `null` before the front door thread reported its heartbeat age. */
  sessionsMainLoopSilenceP99Ms: number | null;
  sessionsWallS: number;
  sessionsRunsPerS: number;
  sessionsWallSDefault: number;
  /** `null` when not measured (runs before the sends shape), as the other new figures. */
  sessionsSendsCoordinatorCpuMsPerRun: number | null;
  sessionsSendsCpuRatio: number | null;
  sessionsSendsCoordinatorRssPeakMb: number | null;
  sessionsSendsHealthzP50Ms: number | null;
  sessionsSendsHealthzP99Ms: number | null;
  sessionsSendsWallS: number | null;
  sessionsSendsRunsPerS: number | null;
  sessionsRunsPerSTwoCoordinators: number | null;
  sessionsRedisCommandsPerRun: number | null;
  sessionsUnnamedAgentCpuMsPerRun: number | null;
  sessionsNamedAgentCpuMsPerRun: number | null;
  sessionsNamedAgentCpuRatio: number | null;
  mcpDirectP50Ms: number | null;
  mcpLifecycleP50Ms: number | null;
  mcpRemoteP50Ms: number | null;
  childRunP50Ms: number | null;
  childRunRemoteCallRunP50Ms: number | null;
  childRunOverheadP50Ms: number | null;
  childRunCpuRatio: number | null;
  /** `null` when the cluster scenario was skipped (as are the other `cluster*` figures). */
  clusterMaxMasterSharePct: number | null;
  clusterRunP50Ms: number | null;
  clusterRunP99Ms: number | null;
  clusterRunsPerS: number | null;
  clusterRunP50MsNoWait: number | null;
  clusterRunP99MsNoWait: number | null;
  clusterRunsPerSNoWait: number | null;
  /** The gateway scenario's figures (`--only gateway` writes them; a full run carries them over). */
  gateway?: Gateway;
  /** The stalled-readers scenario's figures (`--only gatewayReaders` writes them; kept like `gateway`). */
  gatewayReaders?: GatewayReaders;
  /** The new-session cost against the queue's backlog (`--only newSession` writes it; kept like `gateway`). */
  newSession?: NewSession;
  /** Provider limits shared under load (`--only flow` writes them; kept like `gateway`). */
  flow?: Flow;
  cores: number;
  node: string;
  redis: string;
  bullmq: string;
  date: string;
  targets: TargetCheck[];
  details: Measured;
}

function check(
  target: string,
  actual: number,
  limit: number,
  unit: string,
  atLeast = false,
): TargetCheck {
  const met = atLeast ? actual >= limit : actual <= limit;
  const gap = Math.abs(actual - limit);
  const percent = limit ? Math.round((gap / limit) * 100) : 0;
  const words = `${round(gap, 2)} ${unit} (${percent}%)`;
  return {
    target,
    actual: round(actual, 3),
    limit: round(limit, 3),
    atLeast,
    unit,
    met,
    shortfall: met ? "" : `${atLeast ? "below" : "over"} the limit by ${words}`,
    headroom: met ? `${words} of room` : "",
  };
}

/** "concurrency 2,000" for a configuration. */
function labelConcurrency(c: SessionsConfiguration): string {
  return `concurrency ${c.concurrency.toLocaleString("en-US")}`;
}

/** The coordinator's CPU per run may be this many times its raw parts (producer side). */
export const SESSIONS_CPU_RATIO_LIMIT = 1.3;
/** `/healthz` p99 while 2,000 sessions run (ms). */
export const SESSIONS_HEALTHZ_P99_LIMIT_MS = 100;
/** The coordinator's RSS peak while 2,000 sessions run (MiB). */
export const SESSIONS_RSS_LIMIT_MB = 300;
/** A named agent's run may cost the coordinator this many times an unnamed one (noise margin). */
export const NAMED_AGENT_RATIO_LIMIT = 1.1;

/** "2,000 sends at concurrency 2,000" style label of a configuration's shape. */
function labelShape(c: SessionsConfiguration): string {
  const shape = c.shape === "sends" ? "separate sends" : "addBulk";
  return `${shape}, ${labelConcurrency(c)}`;
}

/**
 * The sessions targets of one configuration: the coordinator's CPU per run against its raw
 * parts (producer side), its RSS peak and its `/healthz` p99 while loaded.
 */
function checkSessionsTargets(s: Sessions, c: SessionsConfiguration): TargetCheck[] {
  const label = labelShape(c);
  const limit = SESSIONS_CPU_RATIO_LIMIT;
  return [
    check(
      `coordinator CPU per run ≤ ${limit} × its raw parts (2 SDK calls + 2 BullMQ producer sides), ${label}`,
      c.coordinator.cpuMsPerRun,
      limit * rawParts(s).producerSide,
      "ms",
    ),
    check(
      `coordinator RSS peak ≤ ${SESSIONS_RSS_LIMIT_MB} MB, ${label}`,
      c.coordinator.rssPeakMb,
      SESSIONS_RSS_LIMIT_MB,
      "MB",
    ),
    check(
      `coordinator /healthz p99 ≤ ${SESSIONS_HEALTHZ_P99_LIMIT_MS} ms while loaded, ${label}`,
      c.healthz.p99,
      SESSIONS_HEALTHZ_P99_LIMIT_MS,
      "ms",
    ),
  ];
}

/** The named-agent target (none when not measured): no dearer than an unnamed run. */
function checkAgentTargets(s: Sessions): TargetCheck[] {
  if (!s.agents) return [];
  return [
    check(
      `a named agent's run (YIEM_AGENTS) costs the coordinator ≤ ${NAMED_AGENT_RATIO_LIMIT} × an unnamed run's CPU`,
      s.agents.named.cpuMsPerRun,
      NAMED_AGENT_RATIO_LIMIT * s.agents.unnamed.cpuMsPerRun,
      "ms",
    ),
  ];
}

/** The Redis Cluster target (none when the scenario was skipped): no master over half. */
function checkClusterTargets(cluster: ClusterScenario): TargetCheck[] {
  if (!cluster.measured) return [];
  return [
    check(
      "no Redis Cluster master serves more than 50 % of the data commands (YIEM_REPLICA_ACKS=1)",
      cluster.withWait.spread.maxShare * 100,
      50,
      "%",
    ),
  ];
}

/** The headline figures of the cluster scenario (each `null` when it was skipped). */
function clusterHeadlines(cluster: ClusterScenario) {
  const c: ClusterSpread | undefined = cluster.measured ? cluster : undefined;
  const fig = (value: number | undefined, digits: number) =>
    value === undefined ? null : round(value, digits);
  return {
    clusterMaxMasterSharePct: fig(c && c.withWait.spread.maxShare * 100, 1),
    clusterRunP50Ms: fig(c?.withWait.latency.p50, 1),
    clusterRunP99Ms: fig(c?.withWait.latency.p99, 1),
    clusterRunsPerS: fig(c?.withWait.runsPerS, 0),
    clusterRunP50MsNoWait: fig(c?.withoutWait.latency.p50, 1),
    clusterRunP99MsNoWait: fig(c?.withoutWait.latency.p99, 1),
    clusterRunsPerSNoWait: fig(c?.withoutWait.runsPerS, 0),
  };
}

/**
 * Checks the targets: remote p50 vs raw, fan-out p50, throughput vs raw, for the follow-up
 * burst the commands per follow-up (2,000 vs 200) and another session's wait during it, and
 * for the sessions the coordinator's CPU, memory and `/healthz` in both configurations, and on
 * the Redis Cluster the largest master's share of the data commands.
 */
export function checkTargets(m: Measured): TargetCheck[] {
  return [
    check(
      "remote call p50 ≤ 1.3 × raw BullMQ p50",
      m.calls.remote.p50,
      1.3 * m.calls.raw.p50,
      "ms",
    ),
    check(
      "fan-out of eight p50 ≤ 1.3 × eight raw BullMQ jobs at once",
      m.fanout.remote.p50,
      1.3 * m.fanout.raw.p50,
      "ms",
    ),
    check(
      "throughput ≥ 0.5 × raw BullMQ",
      m.throughput.yiem.callsPerS,
      0.5 * m.throughput.raw.callsPerS,
      "calls/s",
      true,
    ),
    check(
      "Redis commands per follow-up, burst of 2,000 ≤ 1.5 × burst of 200",
      m.followUpBurst.large.commandsPerFollowUp,
      1.5 * m.followUpBurst.small.commandsPerFollowUp,
      "commands",
    ),
    check(
      "another session answered during the burst ≤ 250 ms (p99)",
      m.followUpBurst.otherSession.p99,
      250,
      "ms",
    ),
    ...checkSessionsTargets(m.sessions, m.sessions.large),
    ...checkSessionsTargets(m.sessions, m.sessions.standard),
    ...(m.sessions.sends ? checkSessionsTargets(m.sessions, m.sessions.sends) : []),
    ...checkAgentTargets(m.sessions),
    ...checkClusterTargets(m.cluster),
  ];
}

/** `value` rounded to `digits`, `null` when absent. */
function figure(value: number | undefined, digits = 2): number | null {
  return value === undefined ? null : round(value, digits);
}

/** Runs answered per second of a load. */
export function runsPerS(c: SessionsConfiguration): number {
  return c.answered / (c.wallMs / 1000);
}

/** The headline figures of the sessions scenario. */
function sessionsHeadlines(s: Sessions) {
  const sends = s.sends;
  const raw = rawParts(s);
  return {
    sessionsCoordinatorCpuMsPerRun: round(s.large.coordinator.cpuMsPerRun, 2),
    sessionsCoordinatorCpuMsPerRunDefault: round(s.standard.coordinator.cpuMsPerRun, 2),
    sessionsRawPartsCpuMs: round(raw.producerSide, 2),
    sessionsRawPartsBothSidesCpuMs: round(raw.bothSides, 2),
    sessionsCpuRatio: round(cpuRatioOf(s, s.large), 2),
    sessionsCpuRatioDefault: round(cpuRatioOf(s, s.standard), 2),
    sessionsCoordinatorRssPeakMb: round(s.large.coordinator.rssPeakMb, 0),
    sessionsHealthzP50Ms: round(s.large.healthz.p50, 1),
    sessionsHealthzP99Ms: round(s.large.healthz.p99, 1),
    sessionsMainLoopSilenceP99Ms: figure(
      s.large.mainLoopSilence?.count ? s.large.mainLoopSilence.p99 : undefined,
      0,
    ),
    sessionsWallS: round(s.large.wallMs / 1000, 2),
    sessionsRunsPerS: round(runsPerS(s.large), 0),
    sessionsWallSDefault: round(s.standard.wallMs / 1000, 2),
    sessionsSendsCoordinatorCpuMsPerRun: figure(sends?.coordinator.cpuMsPerRun),
    sessionsSendsCpuRatio: figure(sends && cpuRatioOf(s, sends)),
    sessionsSendsCoordinatorRssPeakMb: figure(sends?.coordinator.rssPeakMb, 0),
    sessionsSendsHealthzP50Ms: figure(sends?.healthz.p50, 1),
    sessionsSendsHealthzP99Ms: figure(sends?.healthz.p99, 1),
    sessionsSendsWallS: figure(sends && sends.wallMs / 1000),
    sessionsSendsRunsPerS: figure(sends && runsPerS(sends), 0),
    sessionsRunsPerSTwoCoordinators: figure(s.twoCoordinators && runsPerS(s.twoCoordinators), 0),
    sessionsRedisCommandsPerRun: figure(s.large.commandstats?.perRun, 1),
    sessionsUnnamedAgentCpuMsPerRun: figure(s.agents?.unnamed.cpuMsPerRun),
    sessionsNamedAgentCpuMsPerRun: figure(s.agents?.named.cpuMsPerRun),
    sessionsNamedAgentCpuRatio: figure(s.agents?.ratio),
  };
}

/** The headline figures of the MCP overhead (each `null` when it was not measured). */
function mcpHeadlines(mcp: McpOverhead | undefined) {
  return {
    mcpDirectP50Ms: figure(mcp?.direct.p50, 3),
    mcpLifecycleP50Ms: figure(mcp?.lifecycle.p50, 3),
    mcpRemoteP50Ms: figure(mcp?.remote.p50, 3),
  };
}

/** The headline figures of the child-run overhead (each `null` when it was not measured). */
function childRunHeadlines(c: ChildRunOverhead | undefined) {
  return {
    childRunP50Ms: figure(c?.child.latency.p50, 2),
    childRunRemoteCallRunP50Ms: figure(c?.remote.latency.p50, 2),
    childRunOverheadP50Ms: figure(c?.overheadP50Ms, 2),
    childRunCpuRatio: figure(c?.cpuRatio, 2),
  };
}

/** The headline figures of a run, rounded, with the target checks and every detail. */
export function toResults(m: Measured): BenchResults {
  return {
    remoteCallP50Ms: round(m.calls.remote.p50),
    remoteCallP99Ms: round(m.calls.remote.p99),
    rawBullmqP50Ms: round(m.calls.raw.p50),
    rawBullmqP99Ms: round(m.calls.raw.p99),
    inProcessCallP50Ms: round(m.calls.inProcess.p50),
    fanout8P50Ms: round(m.fanout.remote.p50),
    throughputCallsPerS: round(m.throughput.yiem.callsPerS, 0),
    rawBullmqJobsPerS: round(m.throughput.raw.callsPerS, 0),
    eventRelayP50Ms: round(m.relay.stream.p50),
    followUpCommandsBurst200: round(m.followUpBurst.small.commandsPerFollowUp, 1),
    followUpCommandsBurst2000: round(m.followUpBurst.large.commandsPerFollowUp, 1),
    followUpCommandsRatio: round(m.followUpBurst.ratio, 2),
    otherSessionDuringBurstP50Ms: round(m.followUpBurst.otherSession.p50, 1),
    otherSessionDuringBurstP99Ms: round(m.followUpBurst.otherSession.p99, 1),
    ...sessionsHeadlines(m.sessions),
    ...mcpHeadlines(m.mcp),
    ...childRunHeadlines(m.childRuns),
    ...clusterHeadlines(m.cluster),
    cores: m.environment.cores,
    node: m.environment.node,
    redis: m.environment.redis,
    bullmq: m.environment.bullmq,
    date: m.environment.date,
    targets: checkTargets(m),
    details: m,
  };
}
