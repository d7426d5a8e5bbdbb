import {
  cpuRatioOf,
  rawParts,
  type Sessions,
  type SessionsConfiguration,
} from "../../measurements/sessions.js";
import {
  type Measured,
  NAMED_AGENT_RATIO_LIMIT,
  runsPerS,
  SESSIONS_CPU_RATIO_LIMIT,
  SESSIONS_HEALTHZ_P99_LIMIT_MS,
  SESSIONS_RSS_LIMIT_MB,
} from "../results.js";
import { sessionsColumns } from "../sessionsColumns.js";
import { count, num, table } from "./markdown.js";

/** What a table cell says of a figure the run did not measure. */
export const NOT_MEASURED = "not yet measured";

/** One row of the sessions table: a figure for every load. */
function sessionsRow(
  s: Sessions,
  name: string,
  value: (c: SessionsConfiguration) => string,
): string[] {
  return [name, ...sessionsColumns(s).map((col) => value(col.config))];
}

/** "**met**" or "**missed**" for `actual` against an upper `limit`. */
function verdict(actual: number, limit: number): string {
  return actual <= limit ? "**met**" : "**missed**";
}

function sessionsTableRows(s: Sessions): string[][] {
  const ms = (v: number) => `${num(v)} ms`;
  const mb = (v: number) => `${num(v, 0)} MB`;
  const sec = (v: number) => `${num(v / 1000)} s`;
  const raw = rawParts(s).producerSide;
  const ratioLimit = SESSIONS_CPU_RATIO_LIMIT * raw;
  const opt = (v: number | undefined, format: (v: number) => string) =>
    v === undefined ? "–" : format(v);
  return [
    sessionsRow(s, "sessions answered", (c) => `${count(c.answered)}/${count(c.sessions)}`),
    sessionsRow(s, "model calls per run", (c) => num(c.modelCallsPerRun)),
    sessionsRow(s, "**coordinator CPU per run** (coordinators summed)", (c) =>
      ms(c.coordinator.cpuMsPerRun),
    ),
    sessionsRow(
      s,
      `÷ raw parts, producer side (${num(raw)} ms; target ≤ ${SESSIONS_CPU_RATIO_LIMIT})`,
      (c) => `${num(cpuRatioOf(s, c))}: ${verdict(c.coordinator.cpuMsPerRun, ratioLimit)}`,
    ),
    sessionsRow(s, "tool workers CPU per run (2, summed)", (c) => ms(c.workers.cpuMsPerRun)),
    sessionsRow(s, "redis-server CPU per run", (c) => ms(c.redis.cpuMsPerRun)),
    sessionsRow(s, "Redis commands per run (whole server, scripts' commands included)", (c) =>
      num(c.redisCommandsPerRun, 1),
    ),
    sessionsRow(s, "this process (scripted model, BullMQ client) CPU per run", (c) =>
      ms(c.benchCpuMsPerRun),
    ),
    sessionsRow(s, "the client process (`YiemClient.send`) CPU per run", (c) =>
      opt(c.senderCpuMsPerRun, ms),
    ),
    sessionsRow(
      s,
      "cores busy on average during the load (whole machine)",
      (c) => `${num(c.machineBusyCores)} of ${c.cores}`,
    ),
    sessionsRow(
      s,
      `**coordinator RSS peak** (target ≤ ${SESSIONS_RSS_LIMIT_MB} MB per coordinator)`,
      (c) =>
        (c.coordinators ?? 1) > 1
          ? `${mb(c.coordinator.rssPeakMb)} (summed)`
          : `${mb(c.coordinator.rssPeakMb)}: ${verdict(c.coordinator.rssPeakMb, SESSIONS_RSS_LIMIT_MB)}`,
    ),
    sessionsRow(s, "tool workers RSS peak (summed)", (c) => mb(c.workers.rssPeakMb)),
    sessionsRow(s, "redis-server RSS peak", (c) => mb(c.redis.rssPeakMb)),
    sessionsRow(s, "`/healthz` p50 while loaded", (c) => ms(c.healthz.p50)),
    sessionsRow(
      s,
      `**\`/healthz\` p99 while loaded** (target ≤ ${SESSIONS_HEALTHZ_P99_LIMIT_MS} ms)`,
      (c) => `${ms(c.healthz.p99)}: ${verdict(c.healthz.p99, SESSIONS_HEALTHZ_P99_LIMIT_MS)}`,
    ),
    sessionsRow(s, "`/healthz` max while loaded", (c) => ms(c.healthz.max)),
    sessionsRow(
      s,
      "the main loop's heartbeat age at each probe, p50 / p99 (what `/healthz` no longer waits for)",
      (c) =>
        c.mainLoopSilence?.count
          ? `${ms(c.mainLoopSilence.p50)} / ${ms(c.mainLoopSilence.p99)}`
          : "–",
    ),
    sessionsRow(
      s,
      "`/healthz` probes during the load (failed)",
      (c) => `${c.healthz.count} (${c.healthzFailed})`,
    ),
    sessionsRow(s, "**wall time**, first request → last answer", (c) => sec(c.wallMs)),
    sessionsRow(s, "**runs per second**", (c) => num(runsPerS(c), 0)),
    sessionsRow(s, `ideal: ⌈sessions / slots⌉ × ${num(s.idealMs / 1000, 1)} s`, (c) =>
      sec(c.slotBoundIdealMs),
    ),
    sessionsRow(s, "wall time ÷ one run's ideal", (c) => num(c.wallMs / s.idealMs, 1)),
    sessionsRow(s, "a session's answer, p50 (from the first request)", (c) =>
      sec(c.runLatency.p50),
    ),
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
    toCores(c, c.senderCpuMsPerRun ?? 0),
  ];
  const rest = c.machineBusyCores - parts.reduce((sum, v) => sum + v, 0);
  const [coordinator = 0, redis = 0, workers = 0, bench = 0, sender = 0] = parts;
  const client = c.senderCpuMsPerRun === undefined ? "" : `, the client process ${num(sender)}`;
  return `${num(c.machineBusyCores)} of ${c.cores} cores were busy on average: the coordinator
${num(coordinator)}, Redis ${num(redis)}, the tool workers ${num(workers)}, this process (the scripted
model and the BullMQ client) ${num(bench)}${client}, everything else on the machine ${num(rest)}`;
}

/** The opening of the section: the cluster, the loads, how each figure is read. */
function sessionsIntro(m: Measured): string {
  const s = m.sessions;
  const p = m.plan.sessions;
  return `## Sessions

${count(p.sessions)} sessions at once on coordinator processes, the compiled build started as
deployed (\`node apps/coordinator/dist/main.js\`, \`LOG_LEVEL=info\`, \`YIEM_HEAP_GROWTH_PERCENT\` at
its default 150), with two compiled tool
workers (\`node apps/tool-worker/dist/main.js\`, \`WORKER_CONCURRENCY\` at its default), a private
\`redis-server\` and a scripted model (in the benchmark process) that answers every request
after ${s.modelDelayMs} ms, streamed as the coordinator asks. The tools are bench-only plain-JS
files (\`bench/setup/sessionTools/\`, through \`YIEM_TOOLS_DIR\`): \`noopStep\` answers at once,
\`progressStep\` reports one partial result (\`onPartialResult\`, a live \`toolExecUpdate\`
event) and then answers; every model call offers both. Each session's one request makes one
model call asking for two parallel calls of one of them (two tool jobs), then a second model
call that answers. A fresh coordinator per load first runs ${p.warmupSessions} sessions (warm-up,
not measured); a session counts as answered when its request job completes with the scripted
answer, seen by one \`QueueEvents\` listener here. The loads share the Redis, the model and the
workers, one after the other in the order of the table's columns; the sessions of earlier
loads stay in Redis during later ones. Two load shapes:

- **\`addBulk\`**: ${count(p.sessions)} requests without \`sessionId\` in one \`queue.addBulk\`
  (plain BullMQ) from this process; the tools are \`noopStep\`s. At concurrency
  ${count(s.large.concurrency)}, at the default ${s.defaultConcurrency}, and (last) on two coordinators
  of ${count(s.large.concurrency)} at once.
- **separate sends**: as a user's load arrives: ${count(p.sessions)} separate
  \`YiemClient.send\` calls (each its own \`queue.add\`, all started at once, each to a new
  session) from a client process of its own (\`bench/workers/sessionSender.ts\`); the tools are
  \`progressStep\`s, so each run also relays two partial results.

- **CPU** per run: \`/proc/<pid>/stat\` (user + system, every thread) just before the
  first request and after the last answer, divided by ${count(p.sessions)}; Redis's pid from
  \`INFO server\` \`process_id\`.
- **RSS**: \`VmRSS\` of \`/proc/<pid>/status\` every ${p.rssIntervalMs} ms during the load, the
  peak (processes of a kind summed per sample). MB here is MiB.
- **\`/healthz\`**: from a process of its own (\`bench/workers/healthProbe.ts\`, so the
  benchmark's busy event loop adds nothing), one \`GET\` after another to the (first)
  coordinator, each ${p.probeIntervalMs} ms after the previous one started (at once when it took
  longer); probes started during the load count.
- **Redis commands**: \`INFO stats\` \`total_commands_processed\` before and after (Redis 7
  counts the commands a script runs as well as the script's call), and \`INFO commandstats\`
  for the same by command (see [Redis commands per run](#redis-commands-per-run)).`;
}

/** The wall times against the ideal, in words. */
function wallWords(s: Sessions): string {
  const sends = s.sends
    ? ` Sent separately from a client process (with progress), the same ${count(s.sends.sessions)}
sessions took ${num(s.sends.wallMs / 1000)} s (${num(runsPerS(s.sends), 0)} runs/s), and ${describeMachineShare(s.sends)}.`
    : "";
  return `One run's ideal is two model answers one after the other, ${num(s.idealMs / 1000, 1)} s. At
concurrency ${count(s.large.concurrency)} every session can run at once, so the ideal for the whole load
is the same ${num(s.idealMs / 1000, 1)} s; it took ${num(s.large.wallMs / 1000)} s, and ${describeMachineShare(s.large)}.
At that concurrency the wall time is set by CPU, not by the model: the
coordinator's one event loop, and the machine's cores it shares with the rest. At the default
${s.defaultConcurrency} the slots allow ${num(s.standard.slotBoundIdealMs / 1000, 1)} s at best; it took
${num(s.standard.wallMs / 1000)} s, and ${describeMachineShare(s.standard)}.${sends}`;
}

/** The coordinator's CPU per run of each load against the producer-side raw parts, in words. */
function ratioWords(s: Sessions): string {
  const raw = rawParts(s).producerSide;
  const one = (name: string, c: SessionsConfiguration) =>
    `${num(c.coordinator.cpuMsPerRun, 3)} ms ${name} (**${num(cpuRatioOf(s, c))}×**, ${num(c.coordinator.cpuMsPerRun - raw, 3)} ms beyond)`;
  const parts = [
    one(`with \`addBulk\` at concurrency ${count(s.large.concurrency)}`, s.large),
    one("at the default", s.standard),
    ...(s.sends ? [one("with separate sends and progress", s.sends)] : []),
  ];
  // The SDK calls as the coordinator sends them: with Yiem's fetch where it was measured.
  const sdk = s.sdkYiemFetch ?? s.sdk;
  const how = s.sdkYiemFetch ? " (sent as the coordinator sends them, with Yiem's fetch)" : "";
  return `The coordinator spent ${parts.join(", ")}; the target is ≤ ${SESSIONS_CPU_RATIO_LIMIT}× in
both shapes. The two SDK calls alone${how} are ${num((200 * sdk.cpuMsPerCall) / s.large.coordinator.cpuMsPerRun, 0)}% of the
coordinator's CPU per run with \`addBulk\` at concurrency ${count(s.large.concurrency)}${
    s.sends
      ? ` and ${num((200 * sdk.cpuMsPerCall) / s.sends.coordinator.cpuMsPerRun, 0)}% with separate sends`
      : ""
  }.`;
}

/** The raw parts of a run: what they count, what they leave out, and the old figure. */
/** How the SDK anchor was taken: the mean of its rounds, when it has several. */
function sdkRoundsWords(s: Sessions): string {
  const rounds = s.sdk.rounds ?? [];
  if (rounds.length < 2) return ", measured after the loads";
  const each = rounds.map((r) => num(r, 3)).join(" and ");
  return `, the mean of two rounds of ${count(s.sdk.calls / rounds.length)} calls (${each} ms): one between the first load and the others, one after the loads, so the anchor sees the machine as the loads did`;
}

function rawPartsSection(s: Sessions, m: Measured): string {
  const p = m.plan.sessions;
  const raw = rawParts(s);
  const workersPerCall = (c: SessionsConfiguration) => c.workers.cpuMsPerRun / 2;
  return `### What a run costs the coordinator, against its raw parts

The raw parts of a run are what a coordinator would do itself with the raw libraries: two
streamed chat completions through the \`openai\` SDK and the **producer side** of two BullMQ
add/complete pairs (the tool jobs it adds and waits for). Both measured alone in this run,
against the same Redis and scripted model:

- **the \`openai\` SDK alone**: ${num(s.sdk.cpuMsPerCall, 3)} ms of CPU per streamed chat completion${sdkRoundsWords(s)}.
  A process of its own (\`bench/workers/sdkAnchor.ts\`, \`node --import tsx\`; only the SDK runs
  once it has started) makes ${count(s.sdk.calls)} calls (after ${count(p.sdkAnchor.warmup)} not counted),
  ${s.sdk.inFlight} in flight, \`chat.completions.create\` with \`stream: true\` and the usage
  chunk, every chunk read (${num(s.sdk.chunksPerCall, 1)} per call). The bodies are the
  coordinator's own, as the scripted model recorded them (a first turn and a turn with the two
  tool results, in turn), so the answers alternate between the two tool calls and the text.
  CPU is that process's \`process.cpuUsage()\` around the measured calls.
- **a plain BullMQ producer**: ${num(s.bullmq.producerCpuMsPerJob, 3)} ms of CPU per job: this process,
  \`queue.add\` with Yiem's tool-job payload and \`job.waitUntilFinished\` (one \`QueueEvents\`),
  \`process.cpuUsage()\` around ${count(s.bullmq.jobs)} jobs (after ${count(p.bullmqAnchor.warmup)} not
  counted), ${s.bullmq.inFlight} in flight.

Raw parts = 2 × ${num(s.sdk.cpuMsPerCall, 3)} + 2 × ${num(s.bullmq.producerCpuMsPerJob, 3)} =
**${num(raw.producerSide, 3)} ms**. ${ratioWords(s)}${yiemFetchWords(s)}

The **worker side** of the same pairs is not the coordinator's work: ${s.bullmq.workerProcesses} plain
worker processes (a constant processor, \`bench/workers/benchWorker.ts\`, \`/proc\`) spent
${num(s.bullmq.workerCpuMsPerJob, 3)} ms per job taking and completing it, against Yiem's tool workers'
${num(workersPerCall(s.large), 3)} ms per call with \`addBulk\` (${num(s.large.workers.cpuMsPerRun, 3)} ms per run of two
calls${s.sends ? `; ${num(workersPerCall(s.sends), 3)} ms per call with progress` : ""}). The old anchor counted that side
in the raw parts too (2 × the whole pair, ${num(s.bullmq.pairCpuMsPerJob, 3)} ms): **${num(raw.bothSides, 3)} ms**, kept
here only as the figure earlier runs compared against (issue 23: it flattered the
coordinator); against it the ratio would read ${num(s.large.coordinator.cpuMsPerRun / raw.bothSides)}× with \`addBulk\`.

What a run does beyond its raw parts: the coordinator is the worker of the request's job as
well as the producer of the two tool jobs, and it runs Yiem's session scripts (record the
input, take the lease, open the run, append the messages, send the events, close the run and
store the response), the agent loop, argument validation, and the transcript sent to the
model twice. The anchors ran ${s.sdk.inFlight} in flight; the SDK's CPU per call falls somewhat as
more calls share each wake-up of the event loop, so at concurrency ${count(s.large.concurrency)} the raw
parts are, if anything, a little cheaper than measured here. Figures of this section move from
run to run with what else the machine runs (see the cores busy above).`;
}

/**
 * What Yiem's own fetch does to the SDK's CPU (measured beside each SDK anchor round), or
 * nothing for runs before it.
 */
function yiemFetchWords(s: Sessions): string {
  const yiem = s.sdkYiemFetch;
  if (!yiem) return "";
  const saved = 2 * (s.sdk.cpuMsPerCall - yiem.cpuMsPerCall);
  return `

The coordinator's own \`openai\` client does not send with the SDK's default \`fetch\`: it sends
with \`createLlmFetch\` (\`packages/core/src/llm/llmFetch.ts\`: undici's \`request\` on the same
global dispatcher, without Node's \`fetch\` cloning each request and teeing its body). The same
SDK process sending that way, in the same rounds right after each default one, took
**${num(yiem.cpuMsPerCall, 3)} ms** per call (${num(yiem.cpuMsPerCall / s.sdk.cpuMsPerCall)}× the default; rounds ${(yiem.rounds ?? []).map((r) => num(r, 3)).join(" and ")} ms), so about ${num(saved, 3)} ms of each
run's raw parts is work the coordinator does not do. The raw parts stay the SDK as a user
runs it; held against raw parts counted with Yiem's fetch instead
(${num(2 * yiem.cpuMsPerCall + 2 * s.bullmq.producerCpuMsPerJob, 3)} ms), the coordinator's CPU would read ${num(s.large.coordinator.cpuMsPerRun / (2 * yiem.cpuMsPerCall + 2 * s.bullmq.producerCpuMsPerJob))}× with \`addBulk\` at concurrency ${count(s.large.concurrency)}.`;
}

/** A named agent's run against an unnamed one (issue 20), or that it was not measured. */
function agentsSection(s: Sessions, p: Measured["plan"]["sessions"]): string {
  const a = s.agents;
  if (!a)
    return `### A named agent's run

${NOT_MEASURED}: the coordinator's CPU per run of a named agent (\`YIEM_AGENTS\`) against an
unnamed run, measured in alternating blocks on one coordinator, joined the scenario after the
last full run.`;
  const met = a.named.cpuMsPerRun <= NAMED_AGENT_RATIO_LIMIT * a.unnamed.cpuMsPerRun;
  return `### A named agent's run

Does a run of a named agent cost the coordinator more than an unnamed run (issue 20)? One
coordinator of concurrency ${count(a.concurrency)}, started with a \`YIEM_AGENTS\` file of two identical
agents (\`default\` and \`bench\`: the same instructions as \`YIEM_SYSTEM_PROMPT\`'s default, the
same model, every tool), after a warm-up block of ${count(p.warmupSessions)} of each: ${a.rounds} rounds of one \`addBulk\` of
${count(a.blockSessions)} requests without \`agent\` and one of ${count(a.blockSessions)} with
\`agent: "bench"\`, the coordinator's CPU read around each block.

| runs | answered | coordinator CPU per run |
| --- | --- | --- |
| unnamed (\`default\`) | ${count(a.unnamed.answered)}/${count(a.unnamed.runs)} | ${num(a.unnamed.cpuMsPerRun, 3)} ms |
| named (\`bench\`) | ${count(a.named.answered)}/${count(a.named.runs)} | ${num(a.named.cpuMsPerRun, 3)} ms |

Named ÷ unnamed: **${num(a.ratio)}** (target ≤ ${NAMED_AGENT_RATIO_LIMIT}, the margin being this
measurement's noise: ${met ? "**met**" : "**missed**"}). For comparison, the coordinator without
\`YIEM_AGENTS\` spent ${num(s.large.coordinator.cpuMsPerRun, 3)} ms per run in the \`addBulk\` load above
(${count(s.large.sessions)} at once rather than blocks of ${count(a.blockSessions)}).`;
}

/** Many sessions at once on compiled coordinators, and their CPU against the raw parts. */
export function sessionsSection(m: Measured): string {
  const s = m.sessions;
  const header = ["figure", ...sessionsColumns(s).map((c) => c.title)];
  const missing = s.sends
    ? ""
    : `\n\nThe separate-sends shape and the two coordinators are ${NOT_MEASURED}: they joined the
scenario after the last full run, whose figures these are (then only \`noopStep\` was offered to
the model, and only the two \`addBulk\` loads ran).`;
  return `${sessionsIntro(m)}

${table(header, sessionsTableRows(s))}${missing}

${wallWords(s)}

${rawPartsSection(s, m)}

${agentsSection(s, m.plan.sessions)}`;
}
