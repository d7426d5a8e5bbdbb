import type { Gateway } from "../../measurements/gateway.js";
import type { RunsPath } from "../../measurements/gatewayRuns.js";
import type { Summary } from "../../sampling/stats.js";
import { count, num, table } from "./markdown.js";

function deliveryRow(name: string, s: Summary, target: string): string[] {
  return [name, count(s.count), num(s.p50, 1), num(s.p90, 1), num(s.p99, 1), num(s.max, 1), target];
}

function runsRow(name: string, p: RunsPath): string[] {
  return [
    name,
    count(p.runs),
    String(p.failed),
    num(p.runsPerS, 1),
    num(p.latency.p50, 1),
    num(p.latency.p99, 1),
  ];
}

/** How many events fewer than the anchor the watchers got, and why, in words. */
function liveDropped(s: Gateway["streams"]): string {
  const fewer = s.deliveryDirect.count - s.delivery.count;
  if (fewer <= 0) return "the watchers got every event the anchor got.";
  return `the watchers got ${count(fewer)} events fewer than the anchor, live ones (streamed text,
\`messageUpdate\`), which a stream drops when one arrives out of step with the stored events
(it is never replayed; the stored \`messageEnd\` carries its text).`;
}

/** How the streams held Redis connections, in words, from the clients counted. */
function streamConnections(s: Gateway["streams"]): string {
  const added = s.redisClientsWatching - s.redisClientsBefore;
  if (added >= s.watchers) {
    return `${num(added / s.watchers)} connections per stream, since each event stream subscribed
on a Redis connection of its own`;
  }
  return `${count(added)} client${added === 1 ? "" : "s"} more for ${count(s.watchers)} streams, which share the gateway's one
subscriber connection (\`SessionEventHub\`)`;
}

/** Whether the anchor itself missed the target, in words (the machine, not the gateway). */
function anchorVerdict(s: Gateway["streams"]): string {
  if (s.deliveryDirect.p99 <= 50) return "";
  return ` The anchor itself was at ${num(s.deliveryDirect.p99, 1)} ms at p99: on the machine as loaded
then, the bus alone delivers later than the target.`;
}

/** The method of the watcher phase, in words. */
function streamsMethod(g: Gateway): string {
  const c = g.plan.cluster;
  const p = g.plan.streams;
  return `Measured alone (\`npm run bench -- --only gateway\`, ${num(g.durationS, 0)} s; not part of the
full run, which keeps these figures) on ${g.date.slice(0, 10)}, load average ${num(g.loadAverage.atStart)} at
the start and ${num(g.loadAverage.atEnd)} at the end on ${g.streams.cores} cores: **the machine was shared with other
work while it ran**, so the figures are an upper bound for this size of machine. A cluster of
compiled processes (\`node apps/…/dist/main.js\`): a private \`redis-server\`, ${c.workers} tool worker,
one coordinator (\`YIEM_COORDINATOR_CONCURRENCY=${c.coordinatorConcurrency}\`), the scripted model
answering after ${c.modelDelayMs} ms (two parallel tool calls, then the answer), and one gateway
without a keys file (the local key) and \`YIEM_HTTP_MAX_CONNECTIONS=${count(c.gatewayMaxConnections)}\`
(the default, 256, would refuse most of the watchers).

${count(p.watchers)} sessions get one run each; then each gets one watcher,
\`GET /v1/sessions/{id}/events\` on a connection of its own from the bench process, which
replays that run (so its subscription is in place); then each session gets one more run,
${p.runsPerS} a second, added with plain BullMQ to the coordinator queue. An event's delivery time
runs from its \`ts\` (the publisher's wall clock — the coordinator's or the tool worker's —
stamped just before it publishes) to its arrival in the bench process (\`Date.now()\` as the
bytes arrive); both read the machine's clock in whole milliseconds, so each figure is within
a millisecond. At the same time one plain ioredis subscriber in the bench process
(\`PSUBSCRIBE\` on every session's channel) records the same events: the anchor, what the bus
alone delivers to a process on the machine as loaded then. The gateway's CPU is
\`/proc/<pid>/stat\` from the first run added to the last
\`agentEnd\` received, its RSS sampled every ${p.rssIntervalMs} ms.`;
}

/** The gateway: SSE delivery with many watchers, and runs/s against plain BullMQ. */
export function gatewaySection(g: Gateway): string {
  const s = g.streams;
  const r = g.runs;
  const target = s.delivery.p99 <= 50 ? "**met**" : "**missed**";
  return `## Gateway

${streamsMethod(g)}

${table(
  ["publish → watcher (ms)", "events", "median", "p90", "p99", "max", "target"],
  [
    deliveryRow("every event of the runs", s.delivery, `≤ 50 ms at p99: ${target}`),
    deliveryRow("stored events (with an `id:`)", s.deliveryStored, "–"),
    deliveryRow(
      "anchor: the same events at one plain subscriber, no gateway",
      s.deliveryDirect,
      "–",
    ),
  ],
)}

${count(s.complete)} of ${count(s.watchers)} watchers saw their run's \`agentEnd\`; ${s.outOfOrder} stored events came out of
order or after a gap; ${liveDropped(s)} The watchers' median was ${num(s.delivery.p50 - s.deliveryDirect.p50, 1)} ms above the anchor's,
their p99 ${num(s.delivery.p99 - s.deliveryDirect.p99, 1)} ms above.${anchorVerdict(s)} The last \`agentEnd\` arrived ${num(s.wallMs / 1000, 1)} s after the first run was added.
While it ran, the gateway used ${num(s.gatewayCores)} cores
(${num(s.gatewayCpuMsPerEvent * 1000, 0)} µs of CPU per event delivered), its RSS went from
${num(s.gatewayRssBeforeMb, 0)} MiB before the watchers to ${num(s.gatewayRssPeakMb, 0)} MiB at most; the coordinator used
${num(s.coordinatorCores)} cores, the bench process (the watchers, the anchor, the model) ${num(s.benchCores)}, and the machine ${num(s.machineBusyCores)} of ${s.cores}.
Redis had ${count(s.redisClientsBefore)} clients before the watchers and ${count(s.redisClientsWatching)} with them
open: ${streamConnections(s)}. Idle (no run going),
Redis served ${num(s.redisCommandsPerSIdleBefore, 0)} commands/s before the watchers and
${num(s.redisCommandsPerSIdleWatching, 0)} with them open: a stream reads its session's stream only when it may
have missed an event (a number skipped, the shared subscriber reconnected), never while it is
in step.

### Runs per second through the gateway

${g.plan.runs.inFlight} loops per path, each starting a run to a fresh session and waiting for its
answer, in ${g.plan.runs.rounds} alternating blocks of ${g.plan.runs.blockMs / 1000} s per path after a warm-up, on the same
coordinator and model: through the gateway, \`POST /v1/runs?wait=true\` (over keep-alive
connections); plain, \`queue.add\` on the coordinator queue with the job data the gateway's
client adds (\`input\`, \`sessionId\`, \`followUp: false\`) and \`job.waitUntilFinished\`.

${table(
  ["path", "runs", "failed", "runs/s", "median ms", "p99 ms"],
  [
    runsRow("`POST /v1/runs?wait=true`", r.gateway),
    runsRow("plain BullMQ `add` + `waitUntilFinished`", r.bullmq),
  ],
)}

Through the gateway: ${num(r.ratio)} × the runs per second of plain BullMQ.`;
}
