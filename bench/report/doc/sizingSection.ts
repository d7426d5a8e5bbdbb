/**
 * The sections of `docs/PERFORMANCE.md` past one coordinator: one against two coordinators on
 * one Redis, the Redis commands a run costs, the sizing rule drawn from them, and the opt-in
 * 10,000 sessions.
 */
import type { ClusterSpread } from "../../measurements/clusterSpread.js";
import type { Sessions, SessionsConfiguration } from "../../measurements/sessions.js";
import { type Measured, runsPerS } from "../results.js";
import type { Sessions10kRecord } from "../sessions10kRecord.js";
import { count, num, table } from "./markdown.js";
import { NOT_MEASURED } from "./sessionsSection.js";
import { tenThousandSection } from "./tenThousandSection.js";

/** One row of the one-against-two table. */
function pairRow(
  name: string,
  one: SessionsConfiguration,
  two: SessionsConfiguration,
  value: (c: SessionsConfiguration) => number,
  digits = 2,
): string[] {
  const a = value(one);
  const b = value(two);
  return [name, num(a, digits), num(b, digits), a ? `${num(b / a)}×` : "–"];
}

/** One against two coordinators, the same `addBulk` load, or that it was not measured. */
function coordinatorsWords(s: Sessions): string {
  const two = s.twoCoordinators;
  if (!two) return `Two coordinators on one Redis: ${NOT_MEASURED}.`;
  const one = s.large;
  const rows = [
    pairRow("runs per second", one, two, runsPerS, 0),
    pairRow("wall time (s)", one, two, (c) => c.wallMs / 1000),
    pairRow("coordinator CPU per run, summed (ms)", one, two, (c) => c.coordinator.cpuMsPerRun),
    pairRow("redis-server CPU per run (ms)", one, two, (c) => c.redis.cpuMsPerRun),
    pairRow("tool workers CPU per run (ms)", one, two, (c) => c.workers.cpuMsPerRun),
    pairRow("Redis commands per run", one, two, (c) => c.redisCommandsPerRun, 1),
    pairRow("cores busy (whole machine)", one, two, (c) => c.machineBusyCores),
    pairRow("`/healthz` p99 of the first coordinator (ms)", one, two, (c) => c.healthz.p99, 1),
  ];
  return `The same ${count(one.sessions)} sessions in one \`addBulk\`, on one coordinator of concurrency
${count(one.concurrency)} (the first load of [Sessions](#sessions)) and, last, on two coordinators of
${count(two.concurrency)} at once on the same Redis, model and workers:

${table(["figure", "one coordinator", "two coordinators", "two ÷ one"], rows)}

**On this machine's ${one.cores} cores this shows what coordination costs, not how Yiem scales:** the
one-coordinator load already kept ${num(one.machineBusyCores)} of ${one.cores} cores busy, so a second
coordinator process finds no idle core to run on. What the second column can show is what a
second process costs when no core is free for it (its own polling and lease renewals, two
processes taking jobs from one queue), not added capacity; note too that the one-coordinator
load is the scenario's first and the two-coordinator load its last. Two coordinators with a
core each (and Redis and the workers with their own) are what the sizing rule below assumes.`;
}

/** The commands of most calls per run, as `INFO commandstats` counted them. */
function commandsTable(c: SessionsConfiguration): string {
  const top = c.commandstats?.top ?? [];
  if (top.length === 0) return "";
  const rows = top.map((t) => [`\`${t.command}\``, num(t.perRun, 1)]);
  return `\n\n${table(["command (`INFO commandstats`)", "calls per run"], rows)}`;
}

/** Commands per run on one Redis, and per master on a cluster. */
function commandsWords(m: Measured): string {
  const c = m.sessions.large;
  const cluster: ClusterSpread | undefined = m.cluster.measured ? m.cluster : undefined;
  const perMaster = cluster
    ? ` On the 3+3 Redis Cluster of [Redis Cluster](#redis-cluster) a run (\`YiemClient.send\`,
two no-op tool calls) cost ${num(cluster.withWait.commandsPerRun, 1)} data commands over every master, of which the
busiest master served ${num(cluster.withWait.spread.maxShare * 100, 1)} %: **${num(cluster.withWait.commandsPerRun * cluster.withWait.spread.maxShare, 1)} commands per run on the busiest
master** (${num(cluster.withoutWait.commandsPerRun * cluster.withoutWait.spread.maxShare, 1)} with \`YIEM_REPLICA_ACKS=0\`).`
    : " The Redis Cluster scenario was skipped, so there is no per-master figure in this run.";
  const byCommand = c.commandstats
    ? commandsTable(c)
    : `\n\nBy command (\`INFO commandstats\`): ${NOT_MEASURED}.`;
  return `A run with \`addBulk\` at concurrency ${count(c.concurrency)} cost Redis ${num(c.redisCommandsPerRun, 1)} commands
(\`INFO stats\` \`total_commands_processed\`, which in Redis 7 counts the commands inside scripts
too) and ${num(c.redis.cpuMsPerRun, 3)} ms of \`redis-server\` CPU.${perMaster}${byCommand}`;
}

/** A per-run CPU cost as a rate per core (per second). */
function perCore(cpuMs: number): string {
  return num(1000 / cpuMs, 0);
}

/** The sizing rule, with this run's figures. */
function sizingRule(m: Measured): string {
  const s = m.sessions;
  const shaped = s.sends ?? s.large;
  const shapeName = s.sends ? "separate sends with progress" : "`addBulk`";
  const workerMsPerCall = shaped.workers.cpuMsPerRun / 2;
  const cluster: ClusterSpread | undefined = m.cluster.measured ? m.cluster : undefined;
  const perMaster = cluster
    ? `${num(cluster.withWait.commandsPerRun * cluster.withWait.spread.maxShare, 1)} on the busiest master`
    : "not measured in this run";
  const rows = [
    [
      "coordinator",
      `${perCore(shaped.coordinator.cpuMsPerRun)} runs/s per core`,
      `${num(shaped.coordinator.cpuMsPerRun, 3)} ms of CPU per run (${shapeName}${
        s.sends
          ? `; ${num(s.large.coordinator.cpuMsPerRun, 3)} ms, ${perCore(s.large.coordinator.cpuMsPerRun)} runs/s, with \`addBulk\``
          : ""
      })`,
    ],
    [
      "tool worker",
      `${perCore(workerMsPerCall)} calls/s per core, plus the tool's own work`,
      `${num(workerMsPerCall, 3)} ms of CPU per no-op call (plain BullMQ's worker side: ${num(s.bullmq.workerCpuMsPerJob, 3)} ms per job)`,
    ],
    [
      "Redis (one server)",
      `${perCore(shaped.redis.cpuMsPerRun)} runs/s per server`,
      `${num(shaped.redis.cpuMsPerRun, 3)} ms of \`redis-server\` CPU and ${num(shaped.redisCommandsPerRun, 1)} commands per run`,
    ],
    [
      "Redis Cluster",
      "the busiest master's share of the commands",
      `commands per run: ${perMaster}`,
    ],
  ];
  return `### Sizing a deployment

Each figure is one process's CPU per unit of work, so it turns into a rate per core: a
coordinator is one event loop (one core each; run more coordinators on more cores, every one
serves every session), a tool worker likewise per process, Redis one core per server (its
commands run one at a time; past one server, a Redis Cluster, where the busiest master is the
limit).

${table(["process", "per core", "from this run"], rows)}

For **R** runs per second of this shape (two tool calls per run): about R × ${num(shaped.coordinator.cpuMsPerRun, 3)} / 1000
coordinator cores, R × 2 × (${num(workerMsPerCall, 3)} + the tool's own ms) / 1000 worker cores, and R × ${num(shaped.redis.cpuMsPerRun, 3)} / 1000 of
one Redis server's core; on a cluster, R × the busiest master's commands per run ÷ what one
master serves per second. Keep each below about 70 % of its cores, so that \`/healthz\` and the
latency stay where [Sessions](#sessions) shows them. A run with more turns or more tool calls
costs the coordinator about one SDK call per turn more (${num((s.sdkYiemFetch ?? s.sdk).cpuMsPerCall, 3)} ms here, as it sends them) and a
little per call; the model's own time costs it nothing but memory. These figures come from a
machine whose ${shaped.cores} cores every process shares (and others' work too, see the load average
at the top); on cores of their own the same work may cost less.`;
}

/**
 * Where a run's commands come from, as `bench/monitorRuns.ts` attributes them (its own run,
 * not part of `npm run bench`: the figures are written here by hand when it is run again).
 */
const MONITOR_RUNS_WORDS = `Where they come from: \`bench/monitorRuns.ts\` (\`npm run build\`, then
\`npx tsx --conditions=yiem-source bench/monitorRuns.ts --runs 100\`) watches the \`sessions\`
shape (two model calls, two parallel tool calls on two worker processes) with \`MONITOR\` and
attributes every command, scripts' inner ones included, to the process and script that sent
it, the idle background subtracted. These are monitorRuns figures, not the \`INFO\` ones above.
On the defaults (completed tool jobs kept an hour), 100 runs in one \`addBulk\`, after issue 31's
latest cuts (2026-12-05, third session): **about 140 commands per run** (139.3 and 140.8 in two
runs; the second: BullMQ 10.0, the bench client's own add; Yiem 123.1; plain 7.7), from 148.5
that session's start and 155.0 that morning. Sent as the CLI, the gateway and the faces send
them (\`--sends\`: each a \`YiemClient.send\` of its own new session, from a client process):
**134.3** (from 140.6), the client's add a Yiem script and no session to record for a job that
names its own. One run after another (\`--sequential --runs 20\`): 147.1, from 160.5 and
199.4. What took them out, per run:

- **A model turn's calls are taken together** (\`WORKER_TAKE_AT_ONCE\`, docs/DECISIONS.md, "a
  turn's calls taken together"): one take moves the run's two tool jobs to one worker (5
  commands for the second), where each had a take of its own (8–9) and woke the other worker,
  which raced for it. About 9 under load, 13 one run after another (the workers' empty takes
  and blocking waits: 0.5 each a run before).
- **A batch of events is one stream entry** (\`appendEvent.lib.lua\`, docs/DECISIONS.md, "how a
  batch of events is stored"): the events one script stores share one \`XADD\`, where each had
  its own (about 15 a run); with a guess of the stream's newest entry the first event goes alone,
  its proof. A close whose queued events begin with the last streamed text no longer reads the
  stream to number it. About 6.
- **Yiem takes its plain jobs itself** (\`takeJob-8.lua\`, "how Yiem takes its jobs"): the queue's
  marker is set only while jobs still wait, and a take that left none sends its worker to wait
  for the marker instead of taking again. Under load about 1.5 (empty takes were rare); one run
  after another about 34: the coordinator's takes 24.0 → 8.7, each tool worker's about 20 → 12.5.

The morning's cuts, from 201.6 (BullMQ 118.5, Yiem 74.2, plain 8.9) to 156.2 (BullMQ 42.1,
Yiem 105.9, plain 8.2):

Before those (the figures that follow are from then): **about 205 commands per run** (204.6:
BullMQ 118.7, Yiem 77.2, plain 8.7). With
\`YIEM_TOOL_JOB_RETENTION_S=0\` (not the default, see below), six runs (load 5 to 10
on 2 cores): **about 197 commands per run** (196.4–198.0): **BullMQ's scripts about 111**
(110.4–111.8: the request job's add 10, take 10 and finish 19.7; each tool job's add 10, take
about 10 and finish about 15), **Yiem's scripts about 77** (77.1–77.5), plain commands about 9
(8.6–9.4: 7 a run, the workers' blocking waits for a job marker, 1.0–1.2, and 0.3–0.9 of the
result waiter's safety read of a tool job, \`HGETALL\` after 250 ms, which calls meet when they
take longer on a busy machine). The same three runs just before the cuts: 210.4–211.6 (BullMQ
124.4–126.3, Yiem 77.4–78.1, plain 7.8–7.9). One run after another (\`--sequential --runs 20\`, four runs):
241.0–243.5 (BullMQ 148.9–150.3, Yiem 77.2–77.8, plain 14.0–16.0), where it was 263.0 (170.3,
78.7, 14.0). What each cut took out, per run:

- **Completed tool jobs not kept** (\`YIEM_TOOL_JOB_RETENTION_S=0\`, measured with it; the default keeps them an hour, see docs/RELIABILITY.md, "Finished tool calls"; BullMQ's
  \`removeOnComplete: true\`), about 8: BullMQ's finish of each no longer adds the job to the
  completed set and its result to the job's hash, nor prunes the set by age and count (\`ZADD\`,
  \`HSET\`, \`ZREVRANGEBYSCORE\`, \`ZREVRANGE\`, \`ZREMRANGEBYRANK\`), for one \`DEL\` of the job's keys.
  In a queue kept full (10,000 completed jobs) each finish also removed the oldest job, which
  this figure, taken on an empty Redis, does not show. The result stays an hour in the job's
  \`toolDone\` marker, which a resumed run and the result waiter's safety poll read for a job
  that is gone. Bull Board no longer lists completed tool calls; a retention in seconds
  brings them back, and its 8 commands.
- **A tool worker's finish takes no next job** (\`EagerWorker.fetchOnFinish\`), about 5 (12
  when one run follows another): BullMQ's \`moveToFinished\` tries to take the next job in the
  same script, 6 commands that find nothing whenever the queue is empty, the common case for a
  tool queue whose workers wait for a job marker; the worker's loop takes the next job itself,
  one script call more when there was one, and blocks for a marker more often (the \`BZPOPMIN\`s
  above, about 0.9 more). Not on a limited tool's queue: there a job waiting for a free slot
  gets no marker, and only the finish that frees the slot hands it out at once (without it,
  \`test/cluster/toolLimits.test.ts\` waited for the workers' 5 s marker waits to time out).
- **A new session's first events read no stream**, 1: a session opened with an empty
  transcript is believed to have no events, so its run's first batch numbers from 1 and its
  script does not read the stream's newest entry (\`XREVRANGE\`); a wrong belief costs one
  refused \`XADD\` and the read it saved.

The cut before those (issue 31's first round, then re-landed), on the same bench: about 221 →
209 (Yiem's own 92 → 78): the \`XREVRANGE\` of each event batch behind a run's first, about 4.7
(the connection guesses the stream's newest entry from its own writes, and the first \`XADD\`
proves it); the transcript's tail read of each append, 3 (an append carries the length the
run knows and its \`RPUSH\` proves it); one \`RPUSH\` and one \`HDEL\` for a batch's two results
instead of two each, 2; the lease taken by a plain \`SET NX\` instead of a script, 1; the read of
\`runInputs\` at the close, 1; the range read of the inputs behind a run's first at its opening,
1; and the read of an answer its own coordinator was storing, about 0.6. It was taken back for a
while (a Redis Cluster failover test failed about one run in three: a pipeline's replies were
shifted, fixed since, see \`state/eventBatches.ts\`) and re-landed. Before that round: 241.7
(BullMQ 126.2, Yiem 108.5, plain 7.1).

What is left (written before the cuts above, which took BullMQ's adds and finishes out: of
BullMQ's scripts only the three takes, about 32, and the client's add remain; a take is 9
commands where a lean one would save two at most, at the price of the delayed jobs' promotion
and the queue's limits BullMQ checks there): BullMQ's ~111 were three jobs' adds, takes and
finishes, about 35 a tool job and 40 the request job. Of them about 24 fed the queues' events
streams (5 \`XADD\`s a job: added, waiting, active, completed, drained; an \`XTRIM\` and two
reads of the stream's cap); Yiem's scripts now write 3 of them a job (waiting, active,
completed), trimmed in the same \`XADD\`, since a plain BullMQ client's \`waitUntilFinished\`
needs them. The request job's retention (its add's choice, 1 h by default) keeps 2 more. Yiem's ~77 are the run's durable writes, each fenced by the lease:
the input's record (\`enqueueInput\`, 8) and the run's opening (\`startRun\`, 11), the events
(about 15 stored a run, an \`XADD\` each, in about 8 script calls, each with its \`PUBLISH\`) with
the transcript appends among them (3 a run, each its lease check and push), the close (\`finishRun\`, 16), the
claim of the request's session (3) and the workers' finished markers (3 a call). The final
answer's append now goes in the close's script (issue 31, see [Peers](#peers), "The critical
path of one run": Yiem's scripts 77.6 → 74.3 a run, one script call fewer; its \`messageEnd\`
stored there only if the run closes). Candidates
measured or weighed and left: a live event's number taken from the guess
instead of the stream (1 a run; a wrong guess would make readers drop a streamed delta), the
\`HDEL\` of running marks and of input budgets when none was set (1 each; the store would have to
track which calls it marked), and reads of a brand-new session's agent, transcript and
running marks (3; a session minted by the claim could still be run meanwhile by a coordinator
that took the request job over).`;

/** Past one coordinator: one against two, commands per run, the sizing rule, 10,000 sessions. */
export function sizingSection(m: Measured, sessions10k: Sessions10kRecord[]): string {
  return `## Past one coordinator

${coordinatorsWords(m.sessions)}

### Redis commands per run

${commandsWords(m)}

${MONITOR_RUNS_WORDS}

${sizingRule(m)}

${tenThousandSection(sessions10k)}`;
}
