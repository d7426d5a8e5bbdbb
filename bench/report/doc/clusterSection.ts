/**
 * The "Redis Cluster" section of `docs/PERFORMANCE.md`: runs on a 3+3 Redis Cluster with and
 * without replica acknowledgements (`WAIT`), and how the data commands spread over the masters.
 */
import { DEFAULT_CLUSTER_SHARDS } from "@yiem/core/internal";
import type {
  AcksPhase,
  ClusterScenario,
  ClusterSpread,
  ClusterSpreadPlan,
} from "../../measurements/clusterSpread.js";
import type { Measured } from "../results.js";
import { count, num, table } from "./markdown.js";

/** The largest share a master may serve (%), as issue 11 asks. */
const MAX_SHARE_PCT = 50;

/** A share (0–1) as a percentage with one decimal. */
function pct(share: number): string {
  return `${num(share * 100, 1)} %`;
}

/** One row of the runs table: a figure without and with `WAIT`, and with ÷ without. */
function acksRow(
  name: string,
  value: (phase: AcksPhase) => number,
  c: ClusterSpread,
  digits = 1,
): string[] {
  const a = value(c.withoutWait);
  const b = value(c.withWait);
  return [name, num(a, digits), num(b, digits), a ? `${num(b / a)}×` : "–"];
}

function runsTable(c: ClusterSpread): string {
  const a = c.withoutWait;
  const b = c.withWait;
  const rows = [
    [
      "runs answered",
      `${count(a.answered)}/${count(a.runs)}`,
      `${count(b.answered)}/${count(b.runs)}`,
      "",
    ],
    acksRow(`**run latency p50**, ${a.inFlight} in flight (ms)`, (p) => p.latency.p50, c),
    acksRow(`**run latency p99**, ${a.inFlight} in flight (ms)`, (p) => p.latency.p99, c),
    acksRow("**runs/s**", (p) => p.runsPerS, c, 0),
    acksRow("run latency p50, one at a time (ms)", (p) => p.soloLatency.p50, c),
    acksRow("run latency p99, one at a time (ms)", (p) => p.soloLatency.p99, c),
    acksRow("data commands per run (every master)", (p) => p.commandsPerRun, c),
    acksRow("`WAIT` per run", (p) => p.waitsPerRun, c),
  ];
  return table(["figure", "`YIEM_REPLICA_ACKS=0`", "`=1` (`WAIT 1 250`)", "with ÷ without"], rows);
}

function spreadTable(c: ClusterSpread): string {
  const rows = c.withWait.spread.masters.map((m, i) => {
    const without = c.withoutWait.spread.masters[i];
    return [
      `slots ${m.slots}`,
      m.holds.map((tag) => `\`${tag}\``).join(", ") || "sessions only",
      count(m.commands),
      pct(m.share),
      without ? pct(without.share) : "–",
    ];
  });
  const header = [
    "master",
    "holds besides sessions",
    "data commands, `=1`",
    "share, `=1`",
    "share, `=0`",
  ];
  return table(header, rows);
}

/** "**met**" or "**missed**" for the largest share against the limit. */
function spreadVerdict(c: ClusterSpread): string {
  return c.withWait.spread.maxShare * 100 <= MAX_SHARE_PCT ? "**met**" : "**missed**";
}

/** One sentence on the cluster target for the targets section (or why it was skipped). */
export function clusterTargetWords(cluster: ClusterScenario): string {
  if (!cluster.measured) return `The Redis Cluster scenario was skipped: ${cluster.reason}.`;
  const { withWait, ratio } = cluster;
  return `On a 3+3 Redis Cluster no master served more than ${pct(withWait.spread.maxShare)} of the
data commands (target ≤ ${MAX_SHARE_PCT} %); with replica acknowledgements (\`WAIT 1 250\`) a run
took ${num(ratio.p50)}× the p50 latency of one without, at ${num(ratio.runsPerS)}× the runs/s; see
[Redis Cluster](#redis-cluster).`;
}

function methodWords(p: ClusterSpreadPlan): string {
  return `Two clusters of their own, started as the tests start one
(\`startTestCluster({ redisCluster: true })\`): each a 3+3 Redis Cluster (six \`redis-server\`
processes on this machine, one replica per master, \`startTestRedisCluster\`), one coordinator
and ${p.workers} tool worker processes (\`node --import tsx\`, \`LOG_LEVEL=info\`, the default
${DEFAULT_CLUSTER_SHARDS} tool queue shards), and a scripted model (in the benchmark
process) that answers at once. One coordinator runs with \`YIEM_REPLICA_ACKS=0\`, the other with
\`1\`, the default on a cluster: each durable session script (input, run, transcript, response)
is followed, in the same pipeline and on the same master, by \`WAIT 1 250\`. A run is one
request to a fresh session (\`YiemClient.send\`): the model asks for two parallel \`sleepFor\`
calls of 0 ms, the two tool jobs run on the workers, the model answers; its latency runs from
\`send\` to \`waitForResponse\` resolved (the answer announced on pub/sub and read back).

Each cluster first runs ${p.warmupRuns} runs (warm-up, not measured), then \`CONFIG RESETSTAT\`
on every node. Then ${p.rounds} rounds; a round runs a block of ${p.runsPerRound} runs,
${p.inFlight} in flight (each loop sends its next run once the last is answered), on one cluster
and then on the other (the order reversed every other round, so drift on the machine falls on
both alike), each block followed by ${p.soloRunsPerRound} runs one at a time. Runs/s is the runs
answered in the loaded blocks ÷ their wall times summed. Data commands are \`calls\` of
\`INFO commandstats\` per master after the last round, topology housekeeping left out (INFO,
PING, CLUSTER, CONFIG, CLIENT, COMMAND, replication), commands run inside scripts included;
they cover the warm-up's end, every measured run, the benchmark's client and the processes'
background polling. The idle cluster's processes keep polling while the other one is loaded.`;
}

/** Where the cost of `WAIT` shows, in words. */
function costWords(c: ClusterSpread, cores: number): string {
  const a = c.withoutWait;
  const b = c.withWait;
  const soloDelta = b.soloLatency.p50 - a.soloLatency.p50;
  const perWait = b.waitsPerRun ? soloDelta / b.waitsPerRun : Number.NaN;
  return `With acknowledgements a run sends ${num(b.waitsPerRun, 1)} \`WAIT\`s, each after a
session script and waited for before the coordinator goes on. One run at a time, that moved
the p50 from ${num(a.soloLatency.p50, 1)} ms to ${num(b.soloLatency.p50, 1)} ms
(${num(soloDelta, 1)} ms, about ${num(perWait, 2)} ms per \`WAIT\`, in which the master asks the
replica for its offset and waits for the answer). With ${a.inFlight} runs in flight a run's
latency is mostly waiting for CPU (the two clusters' twelve \`redis-server\` and six Node
processes and this one share ${cores} cores): the p50 went from
${num(a.latency.p50, 1)} ms to ${num(b.latency.p50, 1)} ms (${num(c.ratio.p50)}×), the p99 from
${num(a.latency.p99, 1)} ms to ${num(b.latency.p99, 1)} ms (${num(c.ratio.p99)}×), and the runs/s
from ${num(a.runsPerS, 0)} to ${num(b.runsPerS, 0)} (${num(c.ratio.runsPerS)}×). Each loop sends its
next run once the last is answered, so runs/s is about ${a.inFlight} ÷ the mean latency: the two
move together. These figures move from run to run with what else the machine runs; the runs one
at a time show the cost of the \`WAIT\`s themselves most directly.`;
}

/** The section, or a line saying why it was skipped. */
export function clusterSection(m: Measured): string {
  const c = m.cluster;
  if (!c.measured) return `## Redis Cluster\n\nSkipped in this run: ${c.reason}.`;
  const share = c.withWait.spread.maxShare;
  return `## Redis Cluster

${methodWords(m.plan.cluster)}

### Replica acknowledgements: with and without \`WAIT\`

${runsTable(c)}

${costWords(c, m.environment.cores)}

### Spread over the masters

${spreadTable(c)}

The largest master served ${pct(share)} of the data commands with acknowledgements
(${pct(c.withoutWait.spread.maxShare)} without); the target is ≤ ${MAX_SHARE_PCT} %:
${spreadVerdict(c)}. On a single Redis (every section above) one server serves all of them.
Sessions spread over the masters by their hash tag \`{<sessionId>}\`; what makes the masters
unequal is where the keys of fixed place land: each BullMQ queue is one hash tag
(\`{coordinator}\`, one \`{tools-default-<n>}\` per shard) and so lives on one master, as does
the worker registry (\`{workers}\`). A master that holds queues serves their scripts for every
run; one that holds none serves only its third of the sessions.`;
}
