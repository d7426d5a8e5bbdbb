/**
 * The sections on the shared rig's calls: the distributions and "Where the time goes" (phase
 * breakdown, the pipelined append, the fan-out, the throughput costs).
 */
import { IDLE_BEFORE_MS } from "../../measurements/breakdown.js";
import type { Throughput } from "../../measurements/throughput.js";
import type { Summary } from "../../sampling/stats.js";
import type { Measured } from "../results.js";
import { num, table } from "./markdown.js";

function row(name: string, s: Summary): string[] {
  return [
    name,
    String(s.count),
    num(s.min, 3),
    num(s.p50, 3),
    num(s.p90, 3),
    num(s.p99, 3),
    num(s.max, 3),
  ];
}

/** The latency distributions of every case measured on the shared rig. */
export function distributionsSection(m: Measured): string {
  const rows = [
    row("remote call", m.calls.remote),
    row("raw BullMQ job", m.calls.raw),
    row("in-process call (events + persistence)", m.calls.inProcess),
    row("in-process pipeline alone", m.calls.inProcessBare),
    row("fan-out of eight, remote", m.fanout.remote),
    row("eight raw BullMQ jobs at once", m.fanout.raw),
    row("event relay, streamSessionEvents", m.relay.stream),
    row("event relay, plain pub/sub subscriber", m.relay.pubsub),
    row("remote call under load (64 sessions)", m.throughput.yiem.latency),
    row("raw job under load (64 loops)", m.throughput.raw.latency),
  ];
  return `## Distributions (ms)

${table(["case", "n", "min", "p50", "p90", "p99", "max"], rows)}

Relayed updates that did not arrive within 2 s: ${m.relay.missed}.`;
}

/** One remote call and one raw BullMQ job, phase by phase. */
export function breakdownSection(m: Measured): string {
  const y = m.breakdown.remote;
  const x = m.breakdown.raw;
  const z = m.breakdown.rawAfterIdle;
  const cells = (a: number | undefined, b: number, c: number) => [
    a === undefined ? "–" : num(a, 3),
    num(b, 3),
    num(c, 3),
  ];
  const rows = [
    ["`toolExecStart` sent (reply not awaited)", num(y.startEvent, 3), "–", "–"],
    ["prepare (validation, hooks) → dispatch", num(y.prepare, 3), "–", "–"],
    ["`queue.add` round trip", ...cells(y.add, x.add, z.add)],
    [
      "add sent → tool runs on the worker",
      ...cells(y.dispatchToExec, x.dispatchToExec, z.dispatchToExec),
    ],
    [
      "tool ran → coordinator woken (the end announced; raw: `QueueEvents`)",
      ...cells(y.execToResult, x.execToResult, z.execToResult),
    ],
    ["finalize + `toolExecEnd` sent (reply not awaited)", num(y.endEvent, 3), "–", "–"],
    [
      "result message's `appendMany` sent (reply awaited by the next write)",
      num(y.append, 3),
      "–",
      "–",
    ],
    ["whole call", ...cells(y.total, x.total, z.total)],
  ];
  const own = y.startEvent + y.prepare + y.endEvent + y.append;
  const queue = y.dispatchToExec + y.execToResult;
  const rawQueue = x.dispatchToExec + x.execToResult;
  const budget = 0.3 * m.calls.raw.p50;
  return `### One call, phase by phase (medians, ms)

${table(["phase", "Yiem", "raw BullMQ", `raw, worker idle ${IDLE_BEFORE_MS} ms first`], rows)}

Yiem's own steps (start event sent, prepare, finalize + end event sent, append sent) take
${num(own, 3)} ms of the ${num(y.total, 3)} ms median. None of Yiem's three Redis writes is a
round trip the call waits for: the two event scripts go out on the same connection ahead of
the \`queue.add\`, so whatever Redis still spends on them shows inside the add's round trip
(${num(y.add, 3)} ms here against ${num(x.add, 3)} ms raw), and the append's reply is waited
for by the session's next write, sent right behind it (see [The pipelined append](#the-pipelined-append)). The queue itself (add sent → tool ran → coordinator woken) takes ${num(queue, 3)} ms
against ${num(rawQueue, 3)} ms for raw BullMQ (${num(z.dispatchToExec + z.execToResult, 3)} ms
when the raw worker has sat idle for ${IDLE_BEFORE_MS} ms before each job). The 1.3× target leaves
${num(budget, 3)} ms (30% of this run's raw p50) for everything Yiem adds to a call; Yiem's
own steps use ${num((own / budget) * 100, 0)}% of it. Phase medians do not add up exactly to
the median of the whole.`;
}

/** A batch of eight parallel calls against eight raw BullMQ jobs at once. */
export function fanoutSection(m: Measured): string {
  const f = m.fanout;
  const line = (name: string, s: Summary) => [name, num(s.p50, 3), num(s.p90, 3)];
  const rows = [
    line(
      "Yiem: events not awaited, one `appendMany`, its reply awaited by the next write (`fanout8P50Ms`)",
      f.remote,
    ),
    line("eight raw BullMQ jobs at once (the floor)", f.raw),
  ];
  const target = f.remote.p50 <= 1.3 * f.raw.p50 ? "within" : "over";
  return `### Fan-out of eight and the floor (ms)

${table(["case", "p50", "p90"], rows)}

\`executeToolCallsParallel\` awaits the emit of a call's \`toolExecStart\` before it prepares and
dispatches the next call, and the coordinator's emit returns once the event is sent (events
still go in order on the one command connection, so Redis runs each start before the job added
after it and start still precedes the worker's updates): the eighth job is added without
waiting for any event's round trip. The eight result messages go in one fenced script, whose
reply the session's next write waits for. The floor, eight raw BullMQ jobs added at once and
awaited together, is ${num(f.raw.p50, 3)} ms, so Yiem adds ${num(f.remote.p50 - f.raw.p50, 3)} ms to a
batch of eight (${num(f.remote.p50 / f.raw.p50)}× the floor; ${target} the 1.3× target).`;
}

/** How the coordinator appends a batch's results without waiting for the reply. */
export function pipelinedAppendSection(): string {
  return `### The pipelined append

The coordinator appends a batch's result messages (one fenced \`appendMany\`) without waiting
for Redis's reply. The session's next write (the next turn's drain of waiting input, or the
run's close) goes out right behind it on the same connection, carrying the transcript length it
expects, and the two replies are awaited together (\`PipelinedTranscript\`). If the append did
not land, that write changes nothing and fails with the append's error, so the transcript never
has a write after a missing append; a remote call's result is durable before the coordinator
hears of it anyway (the completed job, the worker's \`toolDone\` marker). A turn therefore does
not wait for the append's round trip, and the worker sits idle for less time before the next
call.`;
}

function costRow(name: string, y: number, x: number, digits = 0): string[] {
  return [name, num(y, digits), num(x, digits), num(y - x, digits)];
}

/** CPU per call in every process (Redis, coordinator side, workers), microseconds. */
export function totalCpu(t: Throughput): number {
  return t.redisCpuUsPerCall + t.coordinatorCpuUsPerCall + t.workerCpuUsPerCall;
}

/** What a call costs under sustained load, Yiem against raw BullMQ. */
export function throughputSection(m: Measured, cores: number): string {
  const y = m.throughput.yiem;
  const x = m.throughput.raw;
  const rows = [
    costRow("Redis commands per call", y.redisCommandsPerCall, x.redisCommandsPerCall, 1),
    costRow("Redis CPU per call (µs)", y.redisCpuUsPerCall, x.redisCpuUsPerCall),
    costRow(
      "coordinator-side CPU per call (µs)",
      y.coordinatorCpuUsPerCall,
      x.coordinatorCpuUsPerCall,
    ),
    costRow("worker CPU per call (µs)", y.workerCpuUsPerCall, x.workerCpuUsPerCall),
    costRow("all processes, CPU per call (µs)", totalCpu(y), totalCpu(x)),
    costRow("calls/s", y.callsPerS, x.callsPerS),
  ];
  const ceiling = (t: Throughput) => (cores * 1e6) / totalCpu(t);
  const used = (t: Throughput) => (t.callsPerS * totalCpu(t)) / 1e6;
  return `### Throughput: what a call costs

${table(["per call", "Yiem", "raw BullMQ", "difference"], rows)}

Redis, this process and the workers share ${cores} cores (with whatever else runs on the
machine). During the measured windows they used ${num(used(y))} cores' worth of CPU for Yiem
and ${num(used(x))} for raw BullMQ; at these per-call costs the ${cores} cores alone would allow
about ${num(ceiling(y), 0)} Yiem calls/s and ${num(ceiling(x), 0)} raw jobs/s. Yiem's
throughput is ${num(y.callsPerS / x.callsPerS)}× raw's; raw's CPU per call divided by Yiem's is
${num(totalCpu(x) / totalCpu(y))} (when the two agree, the gap is extra work per call, not
waiting). What Yiem adds to BullMQ's commands for a call is its two event scripts (the
EVALSHA with INCR, XADD and PUBLISH) and the fenced append (the EVALSHA with GET, HDEL and
RPUSH). The events are no longer waited for, but each is still a command of its own: a
script call in Redis, a socket write and a reply to read on the coordinator side. On the
worker, Yiem's processor takes the job's abort signal (BullMQ then creates an
\`AbortController\` per job) and runs \`executePreparedToolCall\`; the raw processor returns a
constant.`;
}
