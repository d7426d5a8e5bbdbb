import type { BenchResults, Measured } from "../results.js";
import { totalCpu } from "./callSections.js";
import { num } from "./markdown.js";

/** The changes proposed and not made yet, and how to reproduce the run. */
export function proposalsSection(m: Measured, r: BenchResults): string {
  const f = m.fanout;
  const c = m.calls;
  const y = m.throughput.yiem;
  const x = m.throughput.raw;
  return `## Proposed changes

Made (in \`packages/core\`, as earlier runs of this benchmark proposed), with this run's
figures, before → now at p50:

1. **Events are sent without awaiting each reply**: the coordinator emits through
   \`createEventPublisher\` (\`state/eventBus.ts\`), which sends each event in order on the
   one command connection and waits for them all only at the end of a run, so a parallel batch
   no longer waits one round trip per \`toolExecStart\` before dispatching the next call, and
   \`toolExecEnd\` is not awaited before the append. Fan-out, this change alone:
   ${num(f.before.p50, 3)} → ${num(f.appendsOneByOne.p50, 3)} ms.
2. **A batch's result messages are appended in one fenced script**
   (\`SessionStore.appendMany\`, used by the agent loop's \`appendMessages\`). Fan-out, this
   change alone: ${num(f.before.p50, 3)} → ${num(f.eventsAwaited.p50, 3)} ms. Both: fan-out
   ${num(f.before.p50, 3)} → ${num(f.appendAwaited.p50, 3)} ms; single call ${num(c.remoteBefore.p50, 3)} →
   ${num(c.remoteAppendAwaited.p50, 3)} ms (${num(c.remoteBefore.p50 / c.raw.p50)}× → ${num(c.remoteAppendAwaited.p50 / c.raw.p50)}× raw BullMQ).
3. **The append's reply is not waited for** (\`PipelinedTranscript\`, see
   [The pipelined append](#the-pipelined-append)): fan-out ${num(f.appendAwaited.p50, 3)} →
   ${num(f.remote.p50, 3)} ms; single call ${num(c.remoteAppendAwaited.p50, 3)} → ${num(c.remote.p50, 3)} ms
   (${num(c.remoteAppendAwaited.p50 / c.raw.p50)}× → ${num(c.remote.p50 / c.raw.p50)}× raw BullMQ).
- **No leaked connections**: \`ResultWaiter\` hands \`QueueEvents\` its command connection and
  the workers hand BullMQ \`ctx.command\`, so BullMQ's own blocking duplicates are the only
  extra connections and they close with their owners. The benchmark's lazy command
  connection, which only kept the leaked duplicate from ever connecting, is gone: both
  command connections here connect at once, as the coordinator's does, and the process still
  exits with nothing left open.

Still open (not made here):

4. **Publish \`toolExecEnd\` and append the result in one script** (both are fenced writes of
   the same session; for a batch, one script for its end events and its messages). Now that
   the end event is not awaited this saves a command rather than a wait: per call one script
   call in Redis, one socket write and one reply on the coordinator side. That counts for
   throughput, where the gap is work per call (Yiem ${num(y.callsPerS, 0)} calls/s against raw
   ${num(x.callsPerS, 0)} jobs/s, ${num(totalCpu(y), 0)} µs of CPU per call in all processes
   against ${num(totalCpu(x), 0)} µs); the single-call latency would gain less (remote p50 now ${num(r.remoteCallP50Ms, 3)} ms against
   ${num(r.rawBullmqP50Ms, 3)} ms raw).
5. **ioredis auto-pipelining on the coordinator's command connection**
   (\`enableAutoPipelining\`): commands issued in the same tick of the event loop (the start
   events and adds of a batch, and under load the commands of many sessions) would go out in
   one socket write, which lowers the coordinator's CPU per call rather than Redis's work.
   Tried once outside this benchmark (the single-call cases only, on Yiem's connections and
   the workers'): the single call got slower (about 0.98 → 1.07 ms at p50), since every
   command then waits for the end of its tick (ioredis flushes on \`setImmediate\`). Not
   adopted; a throughput run might still favour it.

## Reproduce

\`npm run bench\` (this run: ${m.durationS} s). \`BENCH_CPU_PROF_DIR=/some/dir npm run bench\` also
writes a CPU profile of every worker process there (\`<workerId>.cpuprofile\`).
\`npm run bench -- --only followUpBurst\` runs the follow-up burst alone and prints its figures
without writing any file; \`--only sessions\` does the same for the sessions, which need the
compiled build (\`npm run build\`). With \`BENCH_CPU_PROF_DIR\` set, the sessions' coordinators
run with \`node --cpu-prof\` and write their profiles there too. \`--only cluster\` runs the
Redis Cluster scenario alone (it needs \`redis-server\` 7 or newer, and is skipped without).`;
}
