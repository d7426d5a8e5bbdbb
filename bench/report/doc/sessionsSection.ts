import type { Sessions, SessionsConfiguration } from "../../measurements/sessions.js";
import type { Measured } from "../results.js";
import { count, num, table } from "./markdown.js";

/** One row of the sessions table: a figure for both configurations. */
function sessionsRow(
  s: Sessions,
  name: string,
  value: (c: SessionsConfiguration) => string,
): string[] {
  return [name, value(s.large), value(s.standard)];
}

/** "**met**" or "**missed**" for `actual` against an upper `limit`. */
function verdict(actual: number, limit: number): string {
  return actual <= limit ? "**met**" : "**missed**";
}

function sessionsTableRows(s: Sessions): string[][] {
  const ms = (v: number) => `${num(v)} ms`;
  const mb = (v: number) => `${num(v, 0)} MB`;
  const sec = (v: number) => `${num(v / 1000)} s`;
  const ratioLimit = 1.5 * s.rawPartsCpuMs;
  return [
    sessionsRow(s, "sessions answered", (c) => `${count(c.answered)}/${count(c.sessions)}`),
    sessionsRow(s, "model calls per run", (c) => num(c.modelCallsPerRun)),
    sessionsRow(s, "**coordinator CPU per run**", (c) => ms(c.coordinator.cpuMsPerRun)),
    sessionsRow(
      s,
      `÷ raw parts (${num(s.rawPartsCpuMs)} ms; target ≤ 1.5)`,
      (c) => `${num(c.cpuRatio)}: ${verdict(c.coordinator.cpuMsPerRun, ratioLimit)}`,
    ),
    sessionsRow(s, "tool workers CPU per run (2, summed)", (c) => ms(c.workers.cpuMsPerRun)),
    sessionsRow(s, "redis-server CPU per run", (c) => ms(c.redis.cpuMsPerRun)),
    sessionsRow(s, "Redis commands per run (whole server)", (c) => num(c.redisCommandsPerRun, 1)),
    sessionsRow(s, "this process (scripted model, BullMQ client) CPU per run", (c) =>
      ms(c.benchCpuMsPerRun),
    ),
    sessionsRow(
      s,
      "cores busy on average during the load (whole machine)",
      (c) => `${num(c.machineBusyCores)} of ${c.cores}`,
    ),
    sessionsRow(
      s,
      "**coordinator RSS peak** (target ≤ 300 MB)",
      (c) => `${mb(c.coordinator.rssPeakMb)}: ${verdict(c.coordinator.rssPeakMb, 300)}`,
    ),
    sessionsRow(s, "tool workers RSS peak (summed)", (c) => mb(c.workers.rssPeakMb)),
    sessionsRow(s, "redis-server RSS peak", (c) => mb(c.redis.rssPeakMb)),
    sessionsRow(s, "`/healthz` p50 while loaded", (c) => ms(c.healthz.p50)),
    sessionsRow(
      s,
      "**`/healthz` p99 while loaded** (target ≤ 200 ms)",
      (c) => `${ms(c.healthz.p99)}: ${verdict(c.healthz.p99, 200)}`,
    ),
    sessionsRow(s, "`/healthz` max while loaded", (c) => ms(c.healthz.max)),
    sessionsRow(
      s,
      "`/healthz` probes during the load (failed)",
      (c) => `${c.healthz.count} (${c.healthzFailed})`,
    ),
    sessionsRow(s, "**wall time**, `addBulk` → last answer", (c) => sec(c.wallMs)),
    sessionsRow(s, `ideal: ⌈sessions / concurrency⌉ × ${num(s.idealMs / 1000, 1)} s`, (c) =>
      sec(c.slotBoundIdealMs),
    ),
    sessionsRow(s, "wall time ÷ one run's ideal", (c) => num(c.wallMs / s.idealMs, 1)),
    sessionsRow(s, "a session's answer, p50 (from the `addBulk`)", (c) => sec(c.runLatency.p50)),
    sessionsRow(s, "a session's answer, p99", (c) => sec(c.runLatency.p99)),
  ];
}

/** Cores a per-run CPU cost kept busy on average during the load. */
function toCores(c: SessionsConfiguration, cpuMsPerRun: number): number {
  return (cpuMsPerRun * c.sessions) / c.wallMs;
}

/** Where the machine's busy cores went during the load, in words. */
function describeMachineShare(c: SessionsConfiguration): string {
  const parts = [
    toCores(c, c.coordinator.cpuMsPerRun),
    toCores(c, c.redis.cpuMsPerRun),
    toCores(c, c.workers.cpuMsPerRun),
    toCores(c, c.benchCpuMsPerRun),
  ];
  const rest = c.machineBusyCores - parts.reduce((sum, v) => sum + v, 0);
  const [coordinator = 0, redis = 0, workers = 0, bench = 0] = parts;
  return `${num(c.machineBusyCores)} of ${c.cores} cores were busy on average: the coordinator
${num(coordinator)}, Redis ${num(redis)}, the tool workers ${num(workers)}, this process (the scripted
model and the BullMQ client) ${num(bench)}, everything else on the machine ${num(rest)}`;
}

/** Many sessions at once on one compiled coordinator, and its CPU against its raw parts. */
export function sessionsSection(m: Measured): string {
  const s = m.sessions;
  const p = m.plan.sessions;
  const header = [
    "figure",
    `concurrency ${count(s.large.concurrency)}`,
    `concurrency ${s.defaultConcurrency} (the default)`,
  ];
  const own = (c: SessionsConfiguration) => c.coordinator.cpuMsPerRun - s.rawPartsCpuMs;
  return `## Sessions

${count(p.sessions)} sessions at once on **one** coordinator process, the compiled build started as
deployed (\`node apps/coordinator/dist/main.js\`, \`LOG_LEVEL=info\`, \`YIEM_HEAP_GROWTH_PERCENT\` at
its default 150), with two compiled tool
workers (\`node apps/tool-worker/dist/main.js\`, \`WORKER_CONCURRENCY\` at its default), a private
\`redis-server\` and a scripted model (in the benchmark process) that answers every request
after ${s.modelDelayMs} ms, streamed as the coordinator asks. The tool is a bench-only plain-JS
file (\`bench/setup/sessionTools/noopStep.mjs\`, through \`YIEM_TOOLS_DIR\`) that answers at once. Each
session's one request makes one model call asking for two parallel \`noopStep\` calls (two
tool jobs), then a second model call that answers. A fresh coordinator per configuration first
runs ${p.warmupSessions} sessions (warm-up, not measured); then ${count(p.sessions)} requests without
\`sessionId\` go in one \`queue.addBulk\` (plain BullMQ), and one \`QueueEvents\` listener
waits for every job id; a session counts as answered when its job completes with the scripted
answer. Both configurations share the Redis, the model and the workers, one after the other
(concurrency ${count(s.large.concurrency)} first); the sessions of the first stay in Redis
during the second.

- **CPU** per run: \`/proc/<pid>/stat\` (user + system, every thread) just before the
  \`addBulk\` and after the last answer, divided by ${count(p.sessions)}; Redis's pid from
  \`INFO server\` \`process_id\`.
- **RSS**: \`VmRSS\` of \`/proc/<pid>/status\` every ${p.rssIntervalMs} ms during the load, the
  peak (the workers' summed per sample). MB here is MiB.
- **\`/healthz\`**: from a process of its own (so the benchmark's busy event loop adds nothing),
  one \`GET\` after another, each ${p.probeIntervalMs} ms after the previous one started (at once
  when it took longer); probes started during the load count.

${table(header, sessionsTableRows(s))}

One run's ideal is two model answers one after the other, ${num(s.idealMs / 1000, 1)} s. At
concurrency ${count(s.large.concurrency)} every session can run at once, so the ideal for the whole load
is the same ${num(s.idealMs / 1000, 1)} s; it took ${num(s.large.wallMs / 1000)} s, and ${describeMachineShare(s.large)}.
At that concurrency the wall time is set by CPU, not by the model: the
coordinator's one event loop, and the machine's cores it shares with the rest. At the default
${s.defaultConcurrency} the slots allow ${num(s.standard.slotBoundIdealMs / 1000, 1)} s at best; it took
${num(s.standard.wallMs / 1000)} s, and ${describeMachineShare(s.standard)}.

### What a run costs the coordinator, against its raw parts

The raw parts of a run are what a coordinator cannot avoid: two streamed chat completions
through the \`openai\` SDK and two BullMQ add/complete pairs. Both measured alone in this run,
against the same Redis and scripted model, after the two configurations:

- **the \`openai\` SDK alone**: ${num(s.sdk.cpuMsPerCall, 3)} ms of CPU per streamed chat completion.
  A process of its own (\`bench/workers/sdkAnchor.ts\`, \`node --import tsx\`; only the SDK runs
  once it has started) makes ${count(s.sdk.calls)} calls (after ${count(p.sdkAnchor.warmup)} not counted),
  ${s.sdk.inFlight} in flight, \`chat.completions.create\` with \`stream: true\` and the usage
  chunk, every chunk read (${num(s.sdk.chunksPerCall, 1)} per call). The bodies are the
  coordinator's own, as the scripted model recorded them (a first turn and a turn with the two
  tool results, in turn), so the answers alternate between the two tool calls and the text.
  CPU is that process's \`process.cpuUsage()\` around the measured calls.
- **a plain BullMQ add/complete pair**: ${num(s.bullmq.pairCpuMsPerJob, 3)} ms of CPU: the producer
  (this process: \`queue.add\` with Yiem's tool-job payload and \`job.waitUntilFinished\`,
  \`process.cpuUsage()\`) ${num(s.bullmq.producerCpuMsPerJob, 3)} ms, plus ${s.bullmq.workerProcesses}
  plain worker processes (a constant processor, \`bench/workers/benchWorker.ts\`, \`/proc\`)
  ${num(s.bullmq.workerCpuMsPerJob, 3)} ms; ${count(s.bullmq.jobs)} jobs (after ${count(p.bullmqAnchor.warmup)}
  not counted), ${s.bullmq.inFlight} in flight.

Raw parts = 2 × ${num(s.sdk.cpuMsPerCall, 3)} + 2 × ${num(s.bullmq.pairCpuMsPerJob, 3)} =
**${num(s.rawPartsCpuMs, 3)} ms**. The coordinator spent ${num(s.large.coordinator.cpuMsPerRun, 3)} ms per
run at concurrency ${count(s.large.concurrency)} (**${num(s.large.cpuRatio)}×**, ${num(own(s.large), 3)} ms
beyond the raw parts) and ${num(s.standard.coordinator.cpuMsPerRun, 3)} ms at the default
(**${num(s.standard.cpuRatio)}×**, ${num(own(s.standard), 3)} ms beyond); the target is ≤ 1.5×. The
two SDK calls alone are ${num((200 * s.sdk.cpuMsPerCall) / s.large.coordinator.cpuMsPerRun, 0)}% of the
coordinator's CPU per run at concurrency ${count(s.large.concurrency)}. What a run does beyond its
raw parts: the coordinator is the worker of the request's job and the producer of the two tool
jobs, and it runs Yiem's session scripts (record the input, take the lease, open the run,
append the messages, send the events, close the run and store the response), the agent loop,
argument validation, and the transcript sent to the model twice. The anchors ran
${s.sdk.inFlight} in flight (the default concurrency); the SDK's CPU per call falls somewhat as more
calls share each wake-up of the event loop, so at concurrency ${count(s.large.concurrency)} the raw parts
are, if anything, a little cheaper than measured here. Figures of this section move from run to
run with what else the machine runs (see the cores busy above).`;
}
