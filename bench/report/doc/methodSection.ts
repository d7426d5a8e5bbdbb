import type { Measured } from "../results.js";

/** How the measurements on the shared rig were taken (processes, paths, sampling). */
export function methodSection(m: Measured): string {
  const p = m.plan;
  return `## Method

- **Processes.** A private \`redis-server\` (\`startTestRedis({ privateServer: true })\`). The
  coordinator side runs in the benchmark process, built as \`startCoordinator\` builds it: one
  command connection shared by the tool queue, the events and the transcript, a
  \`ResultWaiter\` with its subscription to the tool queue's announced job ends, and
  \`queueFor\`. Tool workers are child
  processes (\`node --import tsx\`, as the apps run): \`startToolWorker\` with the benchmark's
  no-op tools for Yiem, a plain BullMQ \`Worker\` whose processor returns a constant result
  for the baseline. Both serve ${m.method.workerConcurrency} jobs at once. Latency
  measurements use one worker process of each kind, throughput two of each; workers of the
  other kind sit idle meanwhile. Child processes were chosen over in-process workers because
  that is how Yiem is deployed and because an in-process worker would share the
  coordinator's event loop.
- **Remote call** (\`remoteCall*\`, \`fanout8*\`, \`throughput*\`): the coordinator's path.
  \`executeToolCalls\` in parallel mode with \`createRemoteExecutor\`; the emit is
  \`createEventPublisher(command, keys, origin).emit\`, which sends \`toolExecStart\` /
  \`toolExecEnd\` with \`publishEvent\` (counter, capped stream and pub/sub in one script) on
  the command connection and returns without awaiting the reply: Redis runs them in the order
  sent, each start ahead of the job added after it and each end ahead of the append. Then
  the batch's result messages are appended in one fenced Lua script,
  \`SessionStore.appendMany\`, under a lease the session holds (as the coordinator's
  \`appendMessages\` does). When the append's reply arrives every event sent before it has
  been published, so the run's closing \`flush\` would add nothing. The agent loop's
  \`messageEnd\` events and the LLM call are not part of it.
- **Raw BullMQ** (\`rawBullmq*\`): \`queue.add\` (same retention options as Yiem's tool jobs,
  a payload of the same shape and size as Yiem's \`ToolJobData\`) then
  \`job.waitUntilFinished(queueEvents, 10000)\`; the processor returns a value of the same
  size as Yiem's \`ToolJobResult\`. Same BullMQ prefix and Redis, its own queue.
- **In-process** (\`inProcessCallP50Ms\`): the same call, events and persistence through the
  default in-process executor, so remote − in-process is what the queue costs. The pipeline
  alone (no-op emit, nothing persisted) is in the distributions below.
- **Sampling.** Each latency case is warmed up first (up to ${p.calls.warmup.count} calls), then
  sampled in alternating blocks (${p.calls.rounds} blocks; A, B, C, A, B, C…) so that drift on
  the machine affects all cases alike: up to ${p.calls.samples.count} single calls and
  ${p.fanout.samples.count} fan-out batches per case, every loop bounded in count and time.
  Latencies are \`performance.now()\` around one call, calls one after another. Each side
  gets one block per round (Yiem's remote call, then raw BullMQ, then the in-process cases,
  which run in this process only), so each worker process idles during the other's block
  alike. Until issue 17 the call and fan-out sets also held the superseded "before" variants
  of the remote path (two and four more remote blocks per round, none on the raw side); Yiem's
  side then ran three to five times the calls of the raw side in every round, which flattered
  its ratios: in alternating runs of today's code, two extra remote blocks per round took the
  single-call ratio from about 1.5 to about 1.33, and two extra raw blocks beside them took it
  back to about 1.5 (the fan-out's five extra blocks were not measured apart). Runs before that
  change (in Recent runs) are not comparable on these two targets.
- **Across processes** (event relay, breakdown): timestamps come from the machine's
  monotonic clock (\`process.hrtime\`, \`CLOCK_MONOTONIC\`), the same clock in every process.
  The relay tool stamps its partial result on the worker; the arrival is stamped by a
  \`streamSessionEvents\` reader (\`eventRelayP50Ms\`) and by a plain pub/sub subscriber.
- **Throughput.** ${p.load.concurrency} concurrent loops ("sessions", each with its own
  lease for Yiem) make one call after another; per round ${p.load.warmupMs / 1000} s of
  warm-up, then a ${p.load.measureMs / 1000} s window in which completed calls are counted;
  ${p.loadRounds} rounds per side, alternating Yiem and raw. Around each window: Redis
  \`INFO\` (commands, CPU), this process's CPU and the worker processes' CPU (\`/proc\`).
- **Follow-up burst** (\`followUpCommands*\`, \`otherSessionDuringBurst*\`): after the
  measurements above have stopped their processes, a cluster of its own, started as the tests
  start one: see [Follow-up burst](#follow-up-burst).
- **Sessions** (\`sessions*\`): then a cluster of compiled processes of its own, started as
  deployed: see [Sessions](#sessions).
- **Redis Cluster** (\`cluster*\`): last, two clusters of their own, each on a 3+3 Redis
  Cluster, one with replica acknowledgements and one without: see [Redis Cluster](#redis-cluster).
- The whole run took ${m.durationS} s.`;
}
