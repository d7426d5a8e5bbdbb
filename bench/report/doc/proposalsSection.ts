import type { BenchResults, Measured } from "../results.js";
import { totalCpu } from "./callSections.js";
import { num } from "./markdown.js";

/** The changes proposed and not made yet, and how to reproduce the run. */
export function proposalsSection(m: Measured, r: BenchResults): string {
  const y = m.throughput.yiem;
  const x = m.throughput.raw;
  return `## Changes made, tried and proposed

Made (issue 23, goal 3), profiled first: a CPU profile of a coordinator in the sessions
scenario (\`BENCH_CPU_PROF_DIR=/some/dir npm run bench -- --only sessions --quick\`, each
sample put in the outermost library on its stack, start-up left out) gave the \`openai\` SDK
(with undici and web streams) 36 % of the busy time, the collector 16 %, ioredis 16 % (the
socket write of each command, \`writeUtf8String\`, 10 % of the whole alone), BullMQ 9 %, Yiem's
own code about 8 %. Counted on the coordinator's connection, a run sent 40 commands, 18 of them
event scripts, and every command was a socket write of its own:

1. **One socket write per pass of the event loop** (\`redis/coalescedWrites.ts\`): each
   connection corks its socket at the first write and uncorks it on \`process.nextTick\`. The
   writes went from about 10 % of the profile to 2 % (one \`writev\` instead); redis-server's
   CPU per run fell about 11 % in a same-machine A/B of the full sessions scenario (0.69 /
   0.72 / 0.85 ms against 0.78 / 0.83 / 0.96 ms per load), the coordinator's about 5 % (3.02 /
   2.97 / 3.23 ms against 3.19 / 3.13 / 3.35 ms), within the machine's noise.
2. **A run's events in one script per batch** (\`state/eventBatches.ts\`,
   \`publishEvents-1.lua\`): events sent one after another go out together, ahead of every
   command sent after them: the run's event scripts fell from 18 to about 9, its commands on
   the coordinator's connection from 40 to about 30 (Redis commands per run, scripts' own
   included, from about 294 to 281).
3. **Fewer empty fetches**: the intake's burst grows from one fetch to sixteen instead of
   starting at sixteen, so a lone request costs one empty BullMQ fetch after it, not sixteen.
4. **\`/healthz\` from a front door thread** (\`coordinator/http/frontDoor.ts\`): the probe no
   longer waits for the agent loop's event loop; its answer carries that loop's heartbeat age,
   shown in [Sessions](#sessions) beside the probe's own latency, so what the probe no longer
   measures is still measured.

Made next (issue 19's single call, issue 23's CPU per run), measured first. On this
machine the single call was 1.41 to 1.54 × raw BullMQ in four \`--only calls\` runs. Its
phases (\`--only breakdown\`) and \`strace\`/\`MONITOR\` timelines of both paths showed the
worker's time per job within 0.05 ms of the plain worker's, and on the coordinator three
\`QueueEvents\` wake-ups a call (added and waiting, active, completed) besides two event
scripts and an append script in Redis ahead of the next job; a CPU profile of the coordinator
side put \`busEventJson\` first among Yiem's own functions (10 µs a call), and a microbenchmark
found stringifying its spread copy three times slower than the event itself:

5. **Announced tool job ends** (\`protocol/toolJobEnds.ts\`, \`worker/jobEnds.ts\`): the
   worker publishes each job's end on its queue's channel, in one script with the job's
   finished marker; the coordinator's waiter subscribes (one wake-up a call, no \`XREAD\`s) and
   still polls. In an A/B of the single call (two cases, alternating, same machine, three
   pairs) it went from 1.52 / 1.49 / 1.50 to 1.45 / 1.38 / 1.44 × raw.
6. **Appends in the event batch** (\`sessionWrites-8.lua\`): a batch's \`toolExecEnd\`
   events, the append of its results and the next call's \`toolExecStart\` go out as one
   script where they were three; in an interleaved A/B of the single call about 0.01 to
   0.02 ms at p50, within the noise, but fewer scripts for every run.
7. **A bus event's JSON by appending** the origin's fields to the event's own JSON (the same
   text): 5.1 → 2.0 µs per \`toolExecEnd\` event in a microbenchmark, for every event of every
   run.
8. **No span context with tracing off** (\`tracing/spans.ts\`): a span that records nothing
   and carries no trace makes no context, and the tracer is made once.

After 5–8 the single call measured 1.31 / 1.26 / 1.23 in three \`--only calls\` runs; six
full runs on this machine gave 1.29, 1.30, 1.29, 1.32, 1.34 and 1.44 × (the last with raw
BullMQ itself at 1.53 ms): the single call sat at its line. The next session traced the tool
worker's takes (BullMQ's \`moveToActive\`) and profiled the sessions' coordinator, whose main
thread spent 36 % of its busy time in the \`openai\` SDK and Node's \`fetch\` (the request
cloned and its body teed for every call), 14 % collecting garbage, 7.5 % building event
batches and 6 % writing to Redis sockets:

9. **Tool workers start a job as soon as they take it** (\`worker/eagerWorker.ts\`):
   BullMQ's loop takes up to its concurrency in jobs (or one empty take) before starting the
   first; here the take after a successful one answers "none" without Redis. In alternating
   \`--only calls\` runs the single call went from 1.29 / 1.30 / 1.27 to 1.21 / 1.16 / 1.15 ×
   raw, then from 1.44 / 1.45 / 1.38 / 1.28 to 1.29 / 1.22 / 1.20 / 1.19 × in a slower phase of
   the machine.
10. **The model calls' own fetch** (\`llm/llmFetch.ts\`): the coordinator's \`openai\` client
   sends with undici's \`request\` instead of Node's \`fetch\`. The SDK alone, 3,000 streamed
   calls per process in alternating processes: 1.48 / 1.19 / 1.59 ms of CPU per call with
   Node's \`fetch\`, 1.33 / 1.32 / 1.33 with \`fetch\` told not to clone (\`redirect: "error"\`,
   \`window: null\`), 0.94 / 1.07 / 1.02 with undici's \`request\`. In \`--only sessions\` runs
   in the same phase of the machine the coordinator's CPU ratios went from 1.45 / 1.49 / 1.29 to
   1.02 / 1.10 / 1.18, and each full run now measures the SDK with it beside the anchor.

This document's run shows the single call at ${num(r.remoteCallP50Ms, 3)} against ${num(r.rawBullmqP50Ms, 3)} ms
(${num(r.remoteCallP50Ms / r.rawBullmqP50Ms)} ×); the session's four full runs gave 1.18, 1.14, 1.17 and 1.19 ×, and
the coordinator's CPU ratios 1.26 / 1.07 / 1.27, 1.19 / 1.10 / 1.14, 1.08 / 1.11 / 1.17 and
1.24 / 1.18 / 1.16 (the fourth after remote calls began to wait out a Redis that refuses
writes, one retry wrapper around each tool job's add).

Tried and not adopted:

- **ioredis auto-pipelining** (\`enableAutoPipelining\`) on Yiem's connections: the single
  call got slower (about 0.98 → 1.07 ms at p50), since every command then waits for
  \`setImmediate\`; the corked socket of change 1 gets the one write without that wait.
- **A larger young generation** (\`--max-semi-space-size=64\` for every process of the
  sessions scenario, alternating with the default, two runs each): coordinator CPU per run
  3.18 / 3.08 / 3.11 ms against 3.14 / 3.21 / 2.98 ms, no difference the noise lets through.
- **Deferring the worker's next take by a \`setImmediate\`** instead of answering it "none"
  (change 9's other form): 1.32 / 1.34 / 1.46 × against 1.23 / 1.27 / 1.20 × for change 9, in
  alternating \`--only calls\` runs.
- **V8's own heap growth** (\`YIEM_HEAP_GROWTH_PERCENT=0\`, after change 10): coordinator CPU
  per run 5.89 / 6.07 / 6.10 ms (1.20 / 1.23 / 1.24 ×), no better than at 150 %, and RSS peaks
  of 280–297 MB against about 240 MB.
- **Waiting for a call's append before timing the next** (the bench's loop sends call N's
  append with call N+1's job): the single call got slower (1.31 and 1.49 × against 1.27 and
  1.33 ×), since the worker idled longer between jobs; the loop stays as the coordinator runs.

Proposed, not made yet:

1. **Less work per call for throughput**, where the gap is work per call in every process
   (Yiem ${num(y.callsPerS, 0)} calls/s against raw ${num(x.callsPerS, 0)} jobs/s, ${num(totalCpu(y), 0)} µs of CPU per call in
   all processes against ${num(totalCpu(x), 0)} µs): on the worker, an \`AbortController\` per job
   costs about 9 µs on Node 20 (V8's transferable signals; lazy from Node 21) and the
   prom-client label lookups a few µs more.
2. **One read at a run's start**: the hold reads the session's agent, transcript, open calls
   and inputs with four commands (\`GET\`, \`LRANGE\`, \`HKEYS\`, \`HGETALL\`) beside the scripts
   that take the lease and open the run; one script could return all of it. They go out in
   two round trips now, not five (the lease with the input's record, the reads with the opening
   and the limits: [Peers](#peers), "The critical path of one run"), so one script would save
   commands, not waits.

## Reproduce

\`npm run bench\` (this run: ${m.durationS} s${m.quick ? ", with `--quick`: a much smaller plan, figures not comparable" : ""}). \`npm run bench -- --quick\` runs every
scenario of the full run at a fraction of its sizes (a minute or two, to check the run works
end to end) and writes its files to \`yiem-bench-quick/\` in the system's temporary directory,
not to the repository. \`BENCH_CPU_PROF_DIR=/some/dir npm run bench\` also
writes a CPU profile of every worker process there (\`<workerId>.cpuprofile\`).
\`npm run bench -- --only followUpBurst\` runs the follow-up burst alone and prints its figures
without writing any file; \`--only sessions\` does the same for the sessions, which need the
compiled build (\`npm run build\`). With \`BENCH_CPU_PROF_DIR\` set, the sessions' coordinators
run with \`node --cpu-prof\` and write their profiles there too. \`--only sessions10k\` (opt-in,
not in the full run) runs the 10,000 sessions and parked runs and adds them to
bench/sessions10k.json (its last five runs, once written), which this document shows; with
\`BENCH_HEAP_SNAPSHOT_DIR\` set it writes the parked coordinator's heap snapshots there too. \`--only cluster\` runs the
Redis Cluster scenario alone (it needs \`redis-server\` 7 or newer, and is skipped without);
\`--only mcp\` the MCP overhead; \`--only calls\`, \`fanout\`, \`relay\`, \`breakdown\` and \`throughput\` run one measurement of
the shared rig alone. \`--quick\` goes with \`--only\` too. \`npm run bench -- --render-only\` measures nothing and renders this
document again from \`bench/results.json\`, \`bench/history.json\` and bench/sessions10k.json (once written). What is where:
\`bench/README.md\`.`;
}
