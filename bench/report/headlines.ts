import { round } from "../sampling/stats.js";
import type { BenchResults } from "./results.js";

/** A headline figure: its key in `results.json`, its unit and what it means. */
export interface Headline {
  key: keyof BenchResults;
  unit: string;
  meaning: string;
}

/** The headline figures in table order. */
export const HEADLINES: Headline[] = [
  {
    key: "remoteCallP50Ms",
    unit: "ms",
    meaning:
      "one no-op call coordinator → tool worker process → coordinator through `executeToolCalls` + `createRemoteExecutor` as the coordinator runs it: start/end events sent without awaiting each reply (`createEventPublisher`), result appended to the transcript (`SessionStore.appendMany`) without awaiting the reply, which the session's next write awaits (median)",
  },
  { key: "remoteCallP99Ms", unit: "ms", meaning: "the same, 99th percentile" },
  {
    key: "rawBullmqP50Ms",
    unit: "ms",
    meaning:
      "plain BullMQ `queue.add` → `job.waitUntilFinished` with a no-op worker process, same payload size and concurrency (median)",
  },
  { key: "rawBullmqP99Ms", unit: "ms", meaning: "the same, 99th percentile" },
  {
    key: "inProcessCallP50Ms",
    unit: "ms",
    meaning:
      "the same no-op call through `executeToolCalls` with the default in-process executor, events and persistence included (median)",
  },
  {
    key: "fanout8P50Ms",
    unit: "ms",
    meaning:
      "a batch of eight parallel no-op calls through the remote path, events and persistence (one `appendMany`, its reply awaited by the next write) included (median)",
  },
  {
    key: "throughputCallsPerS",
    unit: "calls/s",
    meaning: "sustained remote no-op calls, 64 concurrent sessions, two tool worker processes",
  },
  {
    key: "rawBullmqJobsPerS",
    unit: "jobs/s",
    meaning: "sustained raw BullMQ jobs, 64 concurrent loops, two plain worker processes",
  },
  {
    key: "eventRelayP50Ms",
    unit: "ms",
    meaning:
      "a partial result emitted by a tool on a worker → received by `streamSessionEvents` here (median, monotonic clock)",
  },
  {
    key: "followUpCommandsBurst200",
    unit: "commands",
    meaning:
      "Redis commands (`INFO stats` `total_commands_processed`, whole server) per follow-up while a burst of 200 follow-ups (`followUp: true`, one `queue.addBulk`) to one fresh session is answered by a real coordinator process",
  },
  {
    key: "followUpCommandsBurst2000",
    unit: "commands",
    meaning:
      "the same for a burst of 2,000 follow-ups (the plain messages sent to other sessions meanwhile included)",
  },
  {
    key: "followUpCommandsRatio",
    unit: "",
    meaning: "commands per follow-up, burst of 2,000 / burst of 200 (target ≤ 1.5)",
  },
  {
    key: "otherSessionDuringBurstP50Ms",
    unit: "ms",
    meaning:
      "a plain message to another, fresh session sent while the burst of 2,000 is answered: `queue.add` → its `completed` event (`QueueEvents`), messages one after another (median)",
  },
  {
    key: "otherSessionDuringBurstP99Ms",
    unit: "ms",
    meaning: "the same, 99th percentile (target ≤ 250 ms)",
  },
  {
    key: "sessionsCoordinatorCpuMsPerRun",
    unit: "ms",
    meaning:
      "CPU time (`/proc/<pid>/stat` user + system) of one compiled coordinator process (`node apps/coordinator/dist/main.js`, `YIEM_COORDINATOR_CONCURRENCY=2000`) per run, while 2,000 fresh sessions started at once (one `queue.addBulk`) each run one request: a model call asking for two parallel tool calls (run by two compiled tool workers), then a model call that answers; the scripted model answers after 200 ms",
  },
  {
    key: "sessionsCoordinatorCpuMsPerRunDefault",
    unit: "ms",
    meaning: "the same on a coordinator of the default concurrency",
  },
  {
    key: "sessionsRawPartsCpuMs",
    unit: "ms",
    meaning:
      "the raw parts of such a run measured alone, what a coordinator itself would do with the raw libraries: 2 × the `openai` SDK's CPU per streamed chat completion (a process of its own, the coordinator's own request bodies, same scripted model) + 2 × the CPU of a plain BullMQ producer per job (`queue.add` + `waitUntilFinished`)",
  },
  {
    key: "sessionsRawPartsBothSidesCpuMs",
    unit: "ms",
    meaning:
      "the old anchor, kept for comparison only: the same with both sides of each BullMQ pair (the plain worker's take and complete too, work a coordinator never does)",
  },
  {
    key: "sessionsCpuRatio",
    unit: "",
    meaning:
      "coordinator CPU per run ÷ its raw parts (producer side), `addBulk`, concurrency 2,000 (target ≤ 1.3)",
  },
  {
    key: "sessionsCpuRatioDefault",
    unit: "",
    meaning: "the same at the default concurrency",
  },
  {
    key: "sessionsCoordinatorRssPeakMb",
    unit: "MB",
    meaning:
      "the coordinator's highest RSS (`VmRSS`, sampled every 100 ms, MiB) during the 2,000 sessions (`addBulk`) at concurrency 2,000 (target ≤ 300)",
  },
  {
    key: "sessionsHealthzP50Ms",
    unit: "ms",
    meaning:
      "`GET /healthz` on that coordinator from a process of its own, one probe every 50 ms during the load, median",
  },
  {
    key: "sessionsHealthzP99Ms",
    unit: "ms",
    meaning: "the same, 99th percentile (target ≤ 100)",
  },
  {
    key: "sessionsMainLoopSilenceP99Ms",
    unit: "ms",
    meaning:
      "the age of the coordinator's last main-loop heartbeat that each of those probes reported (`eventLoopSilentMs`), 99th percentile: how long the agent loop's event loop went without a turn (the heartbeat is sent every 100 ms, so an idle loop reads 0–100 ms), which `/healthz`, answered by the front door thread, no longer waits for",
  },
  {
    key: "sessionsWallS",
    unit: "s",
    meaning:
      "`queue.addBulk` sent → the last of the 2,000 jobs completed, concurrency 2,000 (one run's ideal: 2 model answers × 200 ms = 0.4 s)",
  },
  {
    key: "sessionsRunsPerS",
    unit: "runs/s",
    meaning: "2,000 ÷ that wall time: runs answered per second by one coordinator",
  },
  {
    key: "sessionsWallSDefault",
    unit: "s",
    meaning: "the same at the default concurrency (its ideal: ⌈2,000 / concurrency⌉ × 0.4 s)",
  },
  {
    key: "sessionsSendsCoordinatorCpuMsPerRun",
    unit: "ms",
    meaning:
      "the coordinator's CPU per run (concurrency 2,000) when the 2,000 requests arrive as separate `YiemClient.send` calls from a client process of its own and each tool reports one partial result",
  },
  {
    key: "sessionsSendsCpuRatio",
    unit: "",
    meaning: "that ÷ the raw parts (producer side) (target ≤ 1.3)",
  },
  {
    key: "sessionsSendsCoordinatorRssPeakMb",
    unit: "MB",
    meaning: "the coordinator's RSS peak in that load (target ≤ 300)",
  },
  { key: "sessionsSendsHealthzP50Ms", unit: "ms", meaning: "`/healthz` median in that load" },
  {
    key: "sessionsSendsHealthzP99Ms",
    unit: "ms",
    meaning: "`/healthz` 99th percentile in that load (target ≤ 100)",
  },
  {
    key: "sessionsSendsWallS",
    unit: "s",
    meaning: "the first `send` → the last of the 2,000 answers",
  },
  {
    key: "sessionsSendsRunsPerS",
    unit: "runs/s",
    meaning: "runs answered per second in that load",
  },
  {
    key: "sessionsRunsPerSTwoCoordinators",
    unit: "runs/s",
    meaning:
      "2,000 sessions in one `addBulk` on two coordinators of concurrency 2,000 at once, same Redis (on two cores: the cost of coordination, not scaling)",
  },
  {
    key: "sessionsRedisCommandsPerRun",
    unit: "commands",
    meaning:
      "Redis commands per run (`INFO commandstats`, scripts' inner commands included), `addBulk` at concurrency 2,000",
  },
  {
    key: "sessionsUnnamedAgentCpuMsPerRun",
    unit: "ms",
    meaning:
      "coordinator CPU per run of requests without `agent`, on a coordinator with a `YIEM_AGENTS` file, in blocks alternating with named runs",
  },
  {
    key: "sessionsNamedAgentCpuMsPerRun",
    unit: "ms",
    meaning: 'the same for requests naming an agent (`agent: "bench"`, identical to `default`)',
  },
  {
    key: "sessionsNamedAgentCpuRatio",
    unit: "",
    meaning: "named ÷ unnamed (target ≤ 1.1, the margin being noise)",
  },
  {
    key: "mcpDirectP50Ms",
    unit: "ms",
    meaning:
      "one `echo` call of `@modelcontextprotocol/server-everything` over stdio through the MCP SDK's `Client` directly (median)",
  },
  {
    key: "mcpLifecycleP50Ms",
    unit: "ms",
    meaning: "the same call as a Yiem tool through the in-process lifecycle (median)",
  },
  {
    key: "mcpRemoteP50Ms",
    unit: "ms",
    meaning:
      "the same call as a remote call to a Yiem tool worker with `YIEM_MCP_CONFIG`, events and transcript included (median)",
  },
  {
    key: "childRunP50Ms",
    unit: "ms",
    meaning:
      "one run on a compiled coordinator whose model calls `agent__child` once (a child run: its own session and coordinator job, the child answering at once, the parent parked and resumed), then answers; `queue.add` → the job's 'completed' event, one run at a time, model answering at once (median)",
  },
  {
    key: "childRunRemoteCallRunP50Ms",
    unit: "ms",
    meaning:
      "the same run with one remote no-op tool call instead of the child, in blocks alternating with it (median)",
  },
  {
    key: "childRunOverheadP50Ms",
    unit: "ms",
    meaning: "child run − remote-call run at p50: what a child run costs over a remote call",
  },
  {
    key: "childRunCpuRatio",
    unit: "",
    meaning: "the coordinator's CPU per child run ÷ per remote-call run",
  },
  {
    key: "clusterMaxMasterSharePct",
    unit: "%",
    meaning:
      "on a 3+3 Redis Cluster (one coordinator, two tool workers, `YIEM_REPLICA_ACKS=1`, the default there), while 400 runs to fresh sessions are answered 32 at a time (and 80 one at a time): the largest master's share of the data commands (`INFO commandstats` per master, topology housekeeping left out) (target ≤ 50)",
  },
  {
    key: "clusterRunP50Ms",
    unit: "ms",
    meaning:
      "one run on that cluster (two parallel no-op tool calls, then the answer): `YiemClient.send` → `waitForResponse` resolved, 32 in flight, session writes followed by `WAIT 1 250` (median)",
  },
  { key: "clusterRunP99Ms", unit: "ms", meaning: "the same, 99th percentile" },
  { key: "clusterRunsPerS", unit: "runs/s", meaning: "runs answered per second, the same load" },
  {
    key: "clusterRunP50MsNoWait",
    unit: "ms",
    meaning:
      "the same on a cluster of its own with `YIEM_REPLICA_ACKS=0` (no `WAIT`), measured in blocks alternating with the other (median)",
  },
  { key: "clusterRunP99MsNoWait", unit: "ms", meaning: "the same, 99th percentile" },
  {
    key: "clusterRunsPerSNoWait",
    unit: "runs/s",
    meaning: "runs answered per second with `YIEM_REPLICA_ACKS=0`",
  },
  { key: "cores", unit: "", meaning: "`os.cpus().length`" },
  { key: "node", unit: "", meaning: "Node.js version" },
  { key: "redis", unit: "", meaning: "Redis version (INFO server `redis_version`)" },
  { key: "bullmq", unit: "", meaning: "BullMQ version" },
  { key: "date", unit: "", meaning: "when this run started" },
];

/** A headline's value as text. */
export function headlineValue(results: BenchResults, headline: Headline): string {
  const value = results[headline.key];
  if (value === null) return "n/a";
  return typeof value === "number" ? String(round(value, 3)) : String(value);
}

/** What each headline figure means, by its key (the "what it is" column of the document). */
export function headlineMeanings(): Map<string, string> {
  return new Map(HEADLINES.map((h) => [String(h.key), h.meaning]));
}
