import type { BenchResults, Measured } from "../results.js";
import { totalCpu } from "./callSections.js";
import { num } from "./markdown.js";

/** The changes proposed and not made yet, and how to reproduce the run. */
export function proposalsSection(m: Measured, r: BenchResults): string {
  const y = m.throughput.yiem;
  const x = m.throughput.raw;
  return `## Proposed changes

Not made yet:

1. **Publish \`toolExecEnd\` and append the result in one script** (both are fenced writes of
   the same session; for a batch, one script for its end events and its messages). Now that
   the end event is not awaited this saves a command rather than a wait: per call one script
   call in Redis, one socket write and one reply on the coordinator side. That counts for
   throughput, where the gap is work per call (Yiem ${num(y.callsPerS, 0)} calls/s against raw
   ${num(x.callsPerS, 0)} jobs/s, ${num(totalCpu(y), 0)} µs of CPU per call in all processes
   against ${num(totalCpu(x), 0)} µs); the single-call latency would gain less (remote p50 now ${num(r.remoteCallP50Ms, 3)} ms against
   ${num(r.rawBullmqP50Ms, 3)} ms raw).
2. **ioredis auto-pipelining on the coordinator's command connection**
   (\`enableAutoPipelining\`): commands issued in the same tick of the event loop (the start
   events and adds of a batch, and under load the commands of many sessions) would go out in
   one socket write, which lowers the coordinator's CPU per call rather than Redis's work.
   Tried once outside this benchmark (the single-call cases only, on Yiem's connections and
   the workers'): the single call got slower (about 0.98 → 1.07 ms at p50), since every
   command then waits for the end of its tick (ioredis flushes on \`setImmediate\`). Not
   adopted; a throughput run might still favour it.
3. **Fewer socket writes per run on the coordinator** (issue 23, goal 3). A CPU profile of a
   coordinator in the separate-sends shape
   (\`BENCH_CPU_PROF_DIR=/some/dir npm run bench -- --only sessions --quick\`: 300 sessions
   with progress, start-up included, on a machine busy with other work, so shares rather than
   times): of its busy time, ioredis's \`sendCommand\` took
   15 % (the socket write of each command's arguments, \`writeUtf8String\`, 10 % alone), most
   of it for the scripts of \`publishEvent\` (5.7 % inclusive), \`publishLiveEvent\` (2.6 %)
   and the transcript's \`append\` (3.6 %); the \`openai\` SDK's request and stream 13 % + 5 %;
   module loading at start 9.5 %; the collector 7 %. The events and appends of one run go out
   as separate commands, each its own write; batching them (proposal 1, or auto-pipelining of
   proposal 2 for the event connection only) is the largest part of the profile that is
   neither the SDK nor start-up. Measured only, not tried yet.

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
