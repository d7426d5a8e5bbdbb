import type { GatewayReaders } from "../../measurements/gatewayReaders.js";
import { count, num, table } from "./markdown.js";

/** The RSS target of issue 34: a gateway holding the readers stays under 300 MB. */
const RSS_TARGET_MB = 300;

/** Stalled and live event-stream readers on one gateway, and another key's requests meanwhile. */
export function gatewayReadersSection(g: GatewayReaders): string {
  const p = g.plan;
  const peakMb = (g.gatewayRssPeakMb * 1024 * 1024) / 1e6;
  const target = peakMb < RSS_TARGET_MB ? "**met**" : "**missed**";
  return `### Stalled readers

Measured alone (\`npm run bench -- --only gatewayReaders\`, ${num(g.durationS, 0)} s, ${g.date.slice(0, 10)}; load
average ${num(g.loadAverage.atStart)} at the start, ${num(g.loadAverage.atEnd)} at the end). The gateway cluster above, and a
second compiled gateway with a keys file (the one measured; the cluster's own stays idle):
${count(p.sessions)} sessions of one key, each with ${p.stalledPerSession} stalled readers of that key (a
\`GET /v1/sessions/{id}/events\` whose socket never reads after the headers) and ${p.livePerSession} live
readers of another key (reading everything); then ${p.largeRuns} of the sessions get a run whose answer
is ${count(p.answerChars)} characters (every event that carries the message carries it whole), ${p.inFlight} at
once, while a third key sends \`GET /v1/sessions/{id}\` one at a time. The gateway's RSS is
sampled every ${p.rssIntervalMs} ms from before the first reader to the end.

| | figure | target |
| --- | ---: | --- |
| readers held | ${count(g.stalled)} stalled + ${count(g.live)} live (${g.refused} refused) | |
| gateway RSS before the readers | ${num(g.gatewayRssBeforeMb, 0)} MiB | |
| with every reader open | ${num(g.gatewayRssReadersMb, 0)} MiB | |
| peak, runs included | ${num(g.gatewayRssPeakMb, 0)} MiB (${num(peakMb, 0)} MB) | under ${RSS_TARGET_MB} MB: ${target} |
| runs answered | ${g.largeRunsAnswered} of ${p.largeRuns} | |
| live readers that read their run's end | ${count(g.liveComplete)} of ${count(g.liveOnLargeRuns)} (${num(g.liveReadMb, 0)} MiB read in all) | |
| a second after the last run's end | ${num(g.gatewayRssEndMb, 0)} MiB | |
| readers cut for falling behind | ${count(g.readersCut)} | |

${table(
  [
    "another key's `GET /v1/sessions/{id}` (ms)",
    "requests",
    "failed",
    "median",
    "p90",
    "p99",
    "max",
  ],
  [
    [
      "while the runs went on",
      count(g.otherKey.count),
      String(g.otherKeyFailed),
      num(g.otherKey.p50, 1),
      num(g.otherKey.p90, 1),
      num(g.otherKey.p99, 1),
      num(g.otherKey.max, 1),
    ],
  ],
)}

Each event stream keeps at most \`GATEWAY_STREAM_QUEUE_EVENTS\` (256) events and
\`GATEWAY_STREAM_QUEUE_BYTES\` (1 MiB) for its reader, the replay read a page at a time as the
reader takes it. A live event reaches the gateway as bytes, copied once out of the subscriber
connection; its number and type are read from its first bytes, the rest is never parsed nor
made a string, and those bytes are what every reader of its session writes (its \`id:\` and
\`event:\` lines before them, the blank line after: \`YiemClient.encodedEvents\`). A stalled
reader pins a reference to the last event or two its socket could not take, shared with every
other reader of its session, never a copy nor a parsed object, until it is cut or closes. A
reader whose queue overflows is cut and resumes from its \`Last-Event-ID\` (docs/SECURITY.md,
"End users: the HTTP gateway"). Before this (335 MiB at the peak on a quiet machine, load
1.1, 2026-12-03), the gateway parsed each live event (a second 1 MiB string), formatted it
again with \`JSON.stringify\` (two more), and kept the parsed object beside the formatted
buffer while any stalled reader held it: sampled in the gateway (\`process.memoryUsage\`, a
run at load 7 peaking at 334 MiB), the V8 heap grew by 92 MiB and Buffers by 69 MiB during the
runs, with about 3 MiB pinned per session whose stalled readers were full; the same sampling
now shows the heap flat (the readers' 70 MiB) and Buffers at most 60 MiB above idle. The figures vary with the machine's load: on a loaded machine the runs
spread out (fewer events in flight at once), more readers fall behind and are cut, and the
gateway's wait for an answer (\`?wait=true\`) can run out before the run ends (fewer runs
answered).`;
}
