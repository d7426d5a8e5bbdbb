/**
 * The opt-in 10,000 sessions of `docs/PERFORMANCE.md` (issue 23, goal 4): the last run's
 * figures, the runs the record keeps (the targets must hold in three in a row), what a parked
 * run was found to hold, and what was tried.
 */
import { runsPerS } from "../results.js";
import type { Sessions10kRecord } from "../sessions10kRecord.js";
import { count, num, table } from "./markdown.js";
import { NOT_MEASURED } from "./sessionsSection.js";

/** The 10,000-sessions targets (issue 23, goal 4). */
const LIVE_RSS_LIMIT_MB = 400;
const LIVE_HEALTHZ_P99_LIMIT_MS = 200;
const PARKED_HEAP_LIMIT_MB = 20;

function metOrMissed(actual: number, limit: number): string {
  return actual <= limit ? "**met**" : "**missed**";
}

const HOW = `\`npm run bench -- --only sessions10k\` (opt-in, one to three minutes; not part of the full run)
adds its figures to bench/sessions10k.json, which keeps the last five runs: on a cluster of its own (the compiled processes as in
[Sessions](#sessions), tools \`noopStep\` and \`gateStep\`, which needs approval, from
\`bench/setup/gateTools/\`), 10,000 sessions in one \`addBulk\` on one coordinator of concurrency
10,000, then 10,000 runs that each call \`gateStep\` twice on a fresh coordinator, all parked
at once; its heap is read after full collections through its inspector
(\`--inspect=127.0.0.1:0\`, \`HeapProfiler.collectGarbage\`, \`bench/workers/heapReader.ts\`)
after a warm-up of parked and approved runs, and again once every call awaits approval. With
\`BENCH_HEAP_SNAPSHOT_DIR\` set it also writes both heap snapshots there, and
\`bench/workers/heapDiff.ts\` tells what the second holds more of.`;

/** What the profile of parked runs showed, what changed, and what was tried. */
const PROFILE = `**What a parked run held, and what it holds now.** Before, the coordinator kept each
request job it held as a task awaiting its answer: in the first full run of this scenario
(load 5.2 at its start) 10,000 parked runs added 49.3 MB of heap (5.05 KiB a run; 9.1 KiB a
run with 1,000, where the code compiled for them weighs more). A heap snapshot of 10,000
parked runs against one of none (\`heapDiff.ts\`, own sizes) gave, per run: 11 closures (the
answer wait's \`cancel\`, the lock's \`onLost\`, the slot's \`release\`, the \`finally\` that let
the job go, the intake's \`catch\`, promise resolvers), 9 contexts, 9 promises and 7 promise
reactions, the suspended \`async\` frame awaiting the answer (a generator with its registers,
330 bytes), an \`AbortController\` with its signal and listener map (only needed while the input
was recorded), the BullMQ \`Job\` with its options and bound \`toKey\`, the wait's record and its
array, a \`Set\` of waits per session, and map entries in four maps: about 5.2 KB. Now a held
job is a record (\`coordinator/intake/heldRequest.ts\`: token, session, agent, name, options,
parent call, phase), its lock's entry (job id → token, renewed with all the others in one call)
and a watch of its answer (\`ResponseWaits.watch\`: one listener shared by every job, waits
counted per session instead of a set); the \`Job\` is built again to complete it. The
coordinator's periodic reads for its parked runs (the orphan watch, two commands per session
every 5 s, and the answer recheck, one per run every 15 s) were sent all at once: a snapshot
caught 6,700 commands in flight, 6.6 MB of ioredis's queue. They go in rounds of 500 now. The
same change keeps \`test/cluster/parkedMemory.test.ts\` honest: 2,000 small runs parked in
process add 1.1–1.4 KiB each now (under its 2 KiB bound), 4.9–5.9 KiB each before.

**Where the live coordinator's time goes.** A CPU profile of this scenario's live coordinator
(\`BENCH_CPU_PROF_DIR\`, load about 5, shares of its busy samples): the runs themselves
(\`sessionRunner\` 13 %, event publishing 7.9 % + 4.6 % live events, the \`openai\` SDK's
stream 8 %, the transcript's appends 5 %, BullMQ's tool-job adds 3.6 %), the collector 11.7 %,
ioredis's socket writes (one per command, \`writeUtf8String\` alone 16 % of the long busy
stretches); the intake (fetching, holding and recording the requests) about 5 %. \`/healthz\`
waits behind stretches of promise continuations of up to a second when thousands of streamed
answers and Redis replies arrive together; their bulk is the events' and appends' commands,
each its own write (proposal 3 below). The orphan watch and the answer recheck, which read all
10,000 sessions at once every 5 s and 15 s, read them in rounds of 500 now.

**What parked runs still cost while they wait.** Not memory but reads: the orphan watch reads
each watched session's lease and parked mark every half lease (\`EXISTS\` and \`HGET\` every
5 s), the answer recheck each held job's answer (\`GET\` every 15 s), and the lock renewal, one
script call for all of them every 15 s, reads and sets each job's lock inside Redis: about 0.6
commands a second per parked run, so 10,000 parked runs keep Redis at several thousand
commands a second and the coordinator at a few per cent of a core (the "idle while parked"
row, with the commands of most calls). Reading a session known to be parked less often would cut
that, at the cost of a slower take-over when a run resumed elsewhere loses its coordinator: not
done.

**Considered, not tried.** Moving a parked run's request job out of the active list (to
\`delayed\`, say) needs no lock and no record at all, but the job's state would no longer tell
a client that its run is under way, every resumed run would have to bring its jobs back, and a
coordinator that dies between storing an answer and that move would leave the job waiting out
its delay: the record costs about a kilobyte a run, so the job stays active and locked.`;

/** The figures of one run, against the targets. */
function lastRunTable(record: Sessions10kRecord): string {
  const l = record.figures.live;
  const p = record.figures.parked;
  return table(
    ["figure", "measured", "target"],
    [
      ["live sessions answered", `${count(l.answered)}/${count(l.sessions)}`, "all"],
      [
        "coordinator RSS peak",
        `${num(l.coordinator.rssPeakMb, 0)} MB`,
        `≤ ${LIVE_RSS_LIMIT_MB} MB: ${metOrMissed(l.coordinator.rssPeakMb, LIVE_RSS_LIMIT_MB)}`,
      ],
      [
        "`/healthz` p50 / p99 / max while loaded",
        `${num(l.healthz.p50, 1)} / ${num(l.healthz.p99, 1)} / ${num(l.healthz.max, 1)} ms`,
        `p99 ≤ ${LIVE_HEALTHZ_P99_LIMIT_MS} ms: ${metOrMissed(l.healthz.p99, LIVE_HEALTHZ_P99_LIMIT_MS)}`,
      ],
      ["coordinator CPU per run", `${num(l.coordinator.cpuMsPerRun, 3)} ms`, ""],
      ["wall time (runs/s)", `${num(l.wallMs / 1000)} s (${num(runsPerS(l), 0)})`, ""],
      [
        "runs parked (calls awaiting approval)",
        `${count(p.runs)} (${count(p.pendingApprovals)})`,
        "",
      ],
      [
        "heap after GC, before → parked",
        `${num(p.before.heapUsedMb, 1)} → ${num(p.parked.heapUsedMb, 1)} MB (+${num(p.heldHeapMb, 1)} MB, ${num(p.heldHeapKbPerRun, 2)} KiB per run)`,
        `≤ ${PARKED_HEAP_LIMIT_MB} MB: ${metOrMissed(p.heldHeapMb, PARKED_HEAP_LIMIT_MB)}`,
      ],
      [
        "RSS, before → parked",
        `${num(p.before.rssMb, 0)} → ${num(p.parked.rssMb, 0)} MB (+${num(p.heldRssMb, 1)} MB)`,
        "",
      ],
      [
        `idle while parked (${num(p.idle.windowMs / 1000, 0)} s): coordinator CPU, Redis commands`,
        `${num(p.idle.coordinatorCpuPercent, 1)} % of a core, ${count(Math.round(p.idle.redisCommandsPerS))}/s${topCommands(p.idle)}`,
        "",
      ],
    ],
  );
}

/** The commands of most calls while parked, as ` (exists 2,000/s, …)`; none in older records. */
function topCommands(idle: Sessions10kRecord["figures"]["parked"]["idle"]): string {
  const top = idle.topCommandsPerS ?? [];
  if (top.length === 0) return "";
  return ` (${top.map((c) => `${c.command} ${count(Math.round(c.perS))}/s`).join(", ")})`;
}

/** Whether one run met every target of goal 4. */
function metAll(record: Sessions10kRecord): boolean {
  const { live, parked } = record.figures;
  return (
    live.answered === live.sessions &&
    live.coordinator.rssPeakMb <= LIVE_RSS_LIMIT_MB &&
    live.healthz.p99 <= LIVE_HEALTHZ_P99_LIMIT_MS &&
    parked.heldHeapMb <= PARKED_HEAP_LIMIT_MB
  );
}

/** One line per run the record keeps, oldest first. */
function runsTable(runs: Sessions10kRecord[]): string {
  const rows = runs.map((r) => {
    const { live, parked } = r.figures;
    return [
      r.date.slice(0, 16).replace("T", " "),
      `${r.loadAverageAtStart} → ${r.loadAverageAtEnd}`,
      `${count(live.answered)}/${count(live.sessions)}`,
      `${num(live.coordinator.rssPeakMb, 0)} MB`,
      `${num(live.healthz.p99, 1)} ms`,
      `+${num(parked.heldHeapMb, 1)} MB (${num(parked.heldHeapKbPerRun, 2)} KiB)`,
      metAll(r) ? "all met" : "**missed**",
    ];
  });
  const header = [
    "run (UTC)",
    "load",
    "answered",
    "RSS peak",
    "`/healthz` p99",
    "parked heap",
    "targets",
  ];
  return table(header, rows);
}

/** The opt-in 10,000 sessions, from their own record, or that they were not measured. */
export function tenThousandSection(runs: Sessions10kRecord[]): string {
  const heading = "### 10,000 sessions on one coordinator";
  const last = runs.at(-1);
  if (!last) return `${heading}\n\n${HOW}\n\nFigures: ${NOT_MEASURED}.\n\n${PROFILE}`;
  const quick = last.plan.sessions < 10_000 ? " (a reduced plan: not the target's size)" : "";
  return `${heading}

${HOW}

The last run, recorded ${last.date}${quick}, ${last.cores} cores, one-minute load average
${last.loadAverageAtStart} at the start and ${last.loadAverageAtEnd} at the end, ${last.durationS} s:

${lastRunTable(last)}

The parked runs are left waiting when the cluster stops (none is approved). The runs the record
keeps, oldest first (the machine is shared: the load average moves the live figures most).
Runs from 2026-12-01 19:51 on probe a coordinator whose \`/healthz\` is answered by its front
door thread (DECISIONS.md, "the coordinator's HTTP port"); before, the probe waited for the agent
loop's event loop, which is why its p99 fell from 115–179 ms to about 10 ms. How long that loop
goes without a turn is still measured, as the heartbeat age of [Sessions](#sessions):

${runsTable(runs)}

${PROFILE}`;
}
