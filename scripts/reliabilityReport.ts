/**
 * Writes docs/RELIABILITY.md from the figures the fault suite records in
 * test/faults/.figures/ (one JSON file per scenario) and the figures of the last full chaos
 * soak (chaos/figures.json, written by `npm run chaos`). Run with `npm run reliability`, which
 * runs the fault suite first, so the document always reflects a real run.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RecoveryTimes } from "../chaos/recovery.js";
import type { ChaosFigures } from "../chaos/report.js";
import type { ReliabilityFigure } from "../test/support/faults.js";

type Figure = ReliabilityFigure & { recordedAt: string };

const root = fileURLToPath(new URL("../", import.meta.url));
const figuresDir = join(root, "test/faults/.figures");

async function readFigures(): Promise<Figure[]> {
  const files = (await readdir(figuresDir)).filter((file) => file.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => JSON.parse(await readFile(join(figuresDir, file), "utf8")) as Figure),
  );
}

const chaosFiguresFile = join(root, "chaos/figures.json");

async function readChaosFigures(): Promise<ChaosFigures | undefined> {
  if (!existsSync(chaosFiguresFile)) return undefined;
  return JSON.parse(await readFile(chaosFiguresFile, "utf8")) as ChaosFigures;
}

/** How many faults of a soak stopped a process (SIGSTOP, then SIGCONT) instead of killing it. */
function stopsOf(chaos: ChaosFigures): number {
  return Object.entries(chaos.faults)
    .filter(([kind]) => kind.includes("SIGSTOP"))
    .reduce((n, [, count]) => n + (count ?? 0), 0);
}

/** A soak's child runs as the table shows them ("–" for a soak from before they were in it). */
function childRunsOf(chaos: ChaosFigures): string {
  const c = chaos.childCalls;
  return c ? `${c.calls} (${c.answered} / ${c.aborted})` : "–";
}

/** The recovery times of a soak (from its kills), on the timers it ran with. */
function renderRecovery(chaos: ChaosFigures): string {
  const r = chaos.recovery;
  if (!r) return "";
  return `
Recovery from its kills, on ${chaos.timers ?? "its timers"}, read from the processes' logs
(seconds, p50 / p99 / max over the kills that had something to recover):

| from the kill to | p50 | p99 | max | kills |
| --- | ---: | ---: | ---: | ---: |
${[
  ["the process found dead", r.detectedS],
  ["a killed coordinator's run resumed elsewhere", r.coordinatorResumedS],
  ["that run's first answer", r.coordinatorAnsweredS],
  ["a killed worker's call handed out again", r.workerHandedOutS],
]
  .map(([label, t]) => {
    const times = t as RecoveryTimes;
    return `| ${label as string} | ${times.p50S} | ${times.p99S} | ${times.maxS} | ${times.count} |`;
  })
  .join("\n")}
`;
}

/** The "Chaos soak" section: what the soak does and checks, and its last full run's figures. */
function renderChaos(chaos: ChaosFigures | undefined): string {
  const figures = chaos
    ? `Last full soak (${chaos.recordedAt}, ${Math.round(chaos.durationS / 60)} min${chaos.cluster ? ", Redis Cluster" : ""}), reproduced by
\`${chaos.command}\`:

| runs | sessions | kills | stops | aborts | approved / denied | answered | tool calls | executions | child runs (answered / aborted) | reruns allowed | duplicates | violations |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| ${chaos.runs} | ${chaos.sessions} | ${chaos.kills} | ${stopsOf(chaos)} | ${chaos.aborts} | ${chaos.approvals.approved} / ${chaos.approvals.denied} | ${chaos.answered} | ${chaos.calls} | ${chaos.executions} | ${childRunsOf(chaos)} | ${chaos.atLeastOnceReruns} | ${chaos.duplicates} | ${chaos.violations} |

| fault | count |
| --- | ---: |
${Object.entries(chaos.faults)
  .map(([kind, count]) => `| ${kind} | ${count} |`)
  .join("\n")}
${renderRecovery(chaos)}`
    : "No full soak recorded yet: `npm run chaos` writes `chaos/figures.json`, which this document reads.\n";
  return `## Chaos soak

\`npm run chaos -- [--runs N] [--seed S] [--cluster] [--minutes M] [--kills K]\` (\`chaos/\`) starts two
coordinators and three workers as deployed (\`node apps/…/dist/main.bundle.js\`, tool files from
\`chaos/tools\`) on the production lock, stalled check and lease (a dead process is noticed by
the failure detector), a private \`redis-server\` with \`appendonly yes\` and \`appendfsync always\` (a SIGKILLed
Redis then loses no write it acknowledged, which the single-Redis guarantees assume; with
\`everysec\` it may acknowledge a write it has not yet written while a background fsync is slow,
a failover's weaker promise that \`--cluster\` covers), and the scripted model. Each input
carries a seeded plan of one to three model turns of parallel remote calls, sequential
in-process calls or both, and now and then a call of a child agent (\`agent__helper\`, from
\`chaos/agents.yaml\`) whose child run follows a plan of its own; some are follow-ups or join
a run in progress, a few calls need approval (an approver connection approves three in four, denies the rest), a few runs are
aborted mid-call (half of those in a child run, so the abort is carried down a tree). Meanwhile a
seeded driver SIGKILLs coordinators and workers (restarted
0–1.5 s later), SIGSTOPs them for 0.5–7 s (past their heartbeat's TTL now and then, so they
are taken for dead and fenced when they wake), and
restarts Redis (SIGKILL or \`SHUTDOWN NOSAVE\`, down 0.2–2 s, same port and AOF folder); with
\`--cluster\`, on a 3+3 Redis Cluster, it kills masters instead. The seed is printed and
reproduces the workload and the fault schedule (not the interleaving). Once the load drained
and a lease passed, a checker outside Redis reads the coordinator queue, every transcript
(through \`SessionStore\`), every key with its TTL, and the tools' ledger file, and proves:

- every request job completed once: none left waiting, active or failed; its answer is the
  response stored in its session; its input recorded exactly once in its transcript;
- every side effect within its documented bound: a remote call with \`retries: 0\` and an
  in-process call that is not idempotent at most once, \`retries: 1\` at most twice, an
  approved call at most once and a denied one never; reruns of idempotent in-process calls
  (and on a Redis Cluster, remote calls run again after a failover) are counted as allowed;
  no execution without its call in a transcript, no \`ok\` result without an execution;
- every transcript well formed: each call id one call and exactly one result, results right
  after their calls and in call order, no result without its call;
- every tree of agents whole: each child call got exactly one result, its child run exactly
  one request job naming that call and an end (not left running); a child that answered
  answered once and its answer is the call's result; one that did not was aborted with its
  tree and gave an error result; no child request without its parent's call;
- no session leased by a dead coordinator, no open run, parked batch or approval index left;
- every key of a kind \`redis/keys.ts\` or BullMQ's layout names, with a TTL within its
  documented retention where it must have one (session state 30 days, responses and finished
  markers a day); an unknown key is a violation.

It prints a table and exits 1 on any violation. \`test/faults/chaos.test.ts\` runs a short
soak (seed 18: at least 300 runs, 6 kills) inside \`npm test\` (its row is in the table above), and
\`test/chaos/checker.test.ts\` feeds the checker each kind of violation.

What it found (each fixed since but the last). Its first full run (seed 20261201: 3,712 runs, 120 kills,
41 stops) reported 3 violations of one defect. A coordinator that stalled through a Redis restart
long enough for the other coordinator to take its session over, and to run the batch's
in-process call that is not idempotent, marked that call as running and ran it a second
time when it came back, before its next lease renewal could tell it the session was gone;
its late marks also left two sessions' \`running\` hashes without an expiry. The mark is now
written only while the holder's lease holds (\`markRunning-2.lua\`, waited for by a replica
on a cluster): a holder that lost the session does not run the call
(\`test/cluster/localCallFence.test.ts\`). The second run (same seed, 4,193 runs) reported one:
an entry of the cluster-wide approval index (\`approvalsPending\`) whose call no longer waited,
kept for good (readers skip such entries; only those with a deadline were ever swept).
Forgetting a batch's approvals, once its results are appended, now drops its calls from the
index too (\`test/cluster/approvalIndex.test.ts\`). The third run (4,322 runs) reported two:
a coordinator SIGKILLed between appending a decided batch (and the answer after it) and
forgetting the batch's approvals left them, its decisions and stored outcomes without expiry
once its successor closed the run from the answer in the transcript: a run that parked or
decided calls now forgets its approvals before it closes
(\`test/cluster/approvalsAtClose.test.ts\`). And a batch's results appended twice
(two results for each of its two calls) when Redis was SIGKILLed while the append was on its
way: the append ran and was persisted, its reply was lost with the connection, and ioredis
sent it again after reconnecting (\`autoResendUnfulfilledCommands\`, on by default); a batch's
first append carries no expected length, so the resent append landed too. It needs a Redis
outage in the few milliseconds an append is in flight (once in about 4,000 runs with 14 Redis
kills). An append whose messages already are the transcript's last ones is now taken for such
a resend and writes nothing (\`appendMessages-3.lua\`, \`appendMessage-3.lua\`: a tool result
carries its call id and time, so no two appends of a run are alike;
\`test/cluster/pipelinedTranscript.test.ts\`). Once the soak ran child runs, its short run
inside \`npm test\` (seed 18) reported two violations of one defect, once in four runs: one
\`agent__helper\` call started two child sessions, so the child's in-process call that is
not idempotent ran twice. Forgetting a batch's approvals (\`ApprovalStore.clear\`) was not
fenced by the lease: a coordinator stopped past its lease and woken deleted the approvals,
decisions and child-run record the next holder's resumed batch had just read or written, and
that batch then started the child again. Only the session's holder forgets now
(\`forgetApprovals-4.lua\`; \`test/cluster/approvalIndex.test.ts\`: a coordinator without
the lease forgets nothing). The full run after that fix (the seed below, child runs included)
reported one violation: an entry of the cluster-wide approval index (\`approvalsPending\`)
left by a coordinator stopped past its lease. Woken, it went on with its batch and wrote the
index entry of a call it then could not record (the request script is fenced by the lease;
the index, in another slot, is written first and is not). The entry names a call that never
waited; readers skip such entries, but nothing removed it. Removing it on the fenced
script's refusal could remove the next holder's entry for the same call, so each coordinator
now sweeps the index instead: every 30 s a page of 200 entries older than a minute (or two
leases), dropping those whose call has no request (\`ApprovalStore.dropOrphanEntries\`;
\`test/cluster/approvalIndex.test.ts\`). The next full run (same seed, 5,879 runs, 1,680 child
runs, after the tool-job ends were announced and the appends joined the event batches)
reported five violations of one crash window: a coordinator SIGKILLed between recording a
call of another agent (the request) and listing its child in the parent's tree left the
request without its listing, and the batch the next holder resumed found the request and did
not list it either: the child answered a call its parent's tree did not know (twice, each
seen from both sides), and a tree whose listing came without its expiry (the two were separate
commands). The resumed batch now lists the child again, and the listing takes its expiry in
the same \`MULTI\` (\`ChildRunStore.request\`; \`test/cluster/childRunTree.test.ts\`). The run in
the table below is the one after that fix.

${figures}`;
}

function row(f: Figure): string {
  const recovery = f.recoveryMs === undefined ? "–" : `${(f.recoveryMs / 1000).toFixed(1)} s`;
  return `| ${f.scenario} | ${f.runs} | ${f.calls} | ${f.lost} | ${f.duplicated} | ${recovery} | ${f.note ?? ""} |`;
}

function render(figures: Figure[], chaos: ChaosFigures | undefined): string {
  const sum = (key: "runs" | "calls" | "lost" | "duplicated") =>
    figures.reduce((n, f) => n + f[key], 0);
  const latest =
    figures
      .map((f) => f.recordedAt)
      .sort()
      .at(-1) ?? "never";
  return `# Reliability

> Generated by \`npm run reliability\` (\`scripts/reliabilityReport.ts\`) from the figures the fault
> suite (\`test/faults/\`) recorded; latest figure: ${latest}. Do not edit by hand.

Every scenario runs real processes (coordinators, tool workers, a private \`redis-server\`) and
kills them with real signals. Tools record each execution in a ledger file, so side effects are
counted, not inferred. **Lost** counts runs that never produced their response; **duplicated**
counts tool call ids with more than one result in a transcript, or remote calls run twice
because of a coordinator crash. Re-executions after a *worker* died are at-least-once by design
(the tool's \`retries\`) and are listed in the notes.

| scenario | runs | calls | lost | duplicated | recovery | notes |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
${figures.map(row).join("\n")}
| **total** | **${sum("runs")}** | **${sum("calls")}** | **${sum("lost")}** | **${sum("duplicated")}** | | |

Recovery is measured from the fault (kill, stop) to the run's response. It is bounded by the
configured detection times, which the suite shortens through configuration:
\`YIEM_LOCK_MS=4000\` and \`YIEM_STALLED_INTERVAL_MS=2000\` (BullMQ notices a dead worker or
coordinator), \`YIEM_LEASE_MS=3000\` (a dead coordinator's hold on a session expires). The
production defaults are 30 s, 30 s and 10 s. The scenario of a concurrency-1 tool, the
scenarios marked "(failure detector)" and the chaos soak keep the production times: there a
dead process is noticed by its heartbeat (below), not by its locks.

## Failure detector

Every coordinator and tool worker keeps its *life* (a UUID taken at each start) alive in the
\`{workers}:alive\` sorted set: a heartbeat thread of its own (\`ops/aliveBeatThread.ts\`, on a
connection of its own) renews it every fifth of \`YIEM_ALIVE_TTL_MS\` (1.5 s), so a long
synchronous tool or a GC pause on the main thread does not stop it. Every lock token (the
coordinator queue's requests, the decisions, the tool calls) and every session lease token the
process takes names that life after an \`@\`. Every coordinator looks for lives whose TTL ran
out every \`YIEM_ALIVE_POLL_MS\` (250 ms, \`coordinator/failureDetector.ts\`) and, for each:

- **hands its jobs out again**, in every queue (the coordinator queue, the decisions queue,
  every shard of the tool queues opened or served by an announced worker), one script per
  queue (\`releaseDeadLocks-7.lua\`): a job whose lock still holds the dead life's token loses
  its lock and goes back to wait as BullMQ's stalled check would move it (\`stc\` counted, the
  \`waiting\` and \`stalled\` events, the queue's global concurrency and pause respected). A
  tool's \`retries\` apply as after a lock that ran out: with one left, another worker runs
  the call; with none, the new holder waits one lock for the lost worker's result
  ("Finished tool calls" above), then answers "may have run";
- **lets its sessions be taken over**: a coordinator that wants a session leased by a dead
  life (its request job, just handed out, or a session it watches) takes the lease with a new
  token in a compare-and-set (\`takeOverLease-1.lua\`); of two, one wins. The dead holder's
  writes are fenced from then on, as after its lease ran out;
- then marks the life dead (kept 10 minutes, so its tokens are still recognised).

**Bounds.** A dead process is noticed within \`YIEM_ALIVE_TTL_MS\` + \`YIEM_ALIVE_POLL_MS\`
(1.75 s) of its last beat, so within that of the kill; its run resumes one fetch and one
lease take later. The locks (\`YIEM_LOCK_MS\`, 30 s) and leases (\`YIEM_LEASE_MS\`, 10 s)
are unchanged and remain the safety net: a process that stops beating but keeps its main
thread (its heartbeat thread failed) or that no coordinator watches is still recovered when
they run out. A process whose *main thread* is blocked but whose heartbeat thread beats is
alive: its locks run out after \`YIEM_LOCK_MS\` as before.

**A paused process.** SIGSTOP stops every thread: a process stopped for longer than the TTL
(or partitioned from Redis as long) is taken for dead and its work taken over. When it wakes,
its heartbeat makes it alive again, but everything it held is fenced: its lease renewals and
fenced session writes fail (\`LeaseLost\`), its job locks are gone (BullMQ refuses its
completions), the calls it ran record their results in their finished markers only, and a
call with no retries left was not run again by the new holder, which waited for that marker.
So a pause is never *both* taken over and unfenced; what it costs is at most the work redone
within the documented bounds (a call with retries may run again, as after a lock that ran
out). Measured by the "(failure detector)" scenarios above: a worker and a coordinator
SIGSTOPped for 10 s on the production timers, each tool run once.

**Partitions and Redis outages.** A process cut off from Redis longer than the TTL is treated
as stopped, above. When Redis itself is away (a restart, a failover), no process can beat: for
one TTL after a coordinator's connection comes back every expired life gets the TTL again
instead of being declared dead (a look that was on its way while the connection came back
declares no one), so a Redis restart declares no one dead; a process
that died during the outage is noticed one TTL later. A coordinator never takes its own life
for dead (woken from a stop, it may look before it beats).
Scores use Redis' clock (\`TIME\` in the scripts), not the processes'. \`YIEM_ALIVE_TTL_MS=0\`
turns the heartbeat and the detector off (the locks and leases alone, as before).

Measured in two short soaks on the production timers (\`npm run chaos -- --runs 150 --kills 8
--seed 32 --concurrency 4 --minutes 4 --no-figures\`, 350 runs, 7 SIGKILLs and 7 SIGSTOPs, on
a machine shared with other work at a load average near 30, 0 violations): kill → found dead
p50 1.6 s, max 1.7 s (6 kills); coordinator kill → its run resumed by the other coordinator
p50 1.8 s, max 1.9 s (4); → that run's first answer p50 3.3 s, max 5.2 s; worker kill → its
call handed out again 1.6 s (1). Seed 31 (339 runs, 8 kills): found dead p50 1.7 s, max
2.3 s; run resumed p50 2.4 s, max 3.0 s. Before the detector, on these timers, a run whose
coordinator died waited for its request job's lock (30 s) and the stalled check (up to 30 s
more).

## Finished tool calls

A worker records each tool job it finishes in a marker (\`toolDone:<jobId>\`, written before
the job is completed, kept as long as the job: 1 h with a result, 24 h without). The marker,
not the job, is what keeps a remote call from running twice across faults:

- **A removed job is not a reason to run again.** A run resumed after its coordinator died
  reads the marker of each unanswered remote call before adding its job again. A call whose
  finished job was removed meanwhile (a board "clean completed", or 10,000 later completions
  trimming the queue, seconds at full throughput) gets the result it had, and its tool does
  not run. A first dispatch reads nothing: only a resume can meet a job that existed before.
- **A stopped worker is not a dead one.** A call handed out again after its worker went silent
  past its lock, with no retries left, waits one more lock duration (\`YIEM_LOCK_MS\`) for
  that worker's marker. A worker that was only stopped (SIGSTOP, a blocked event loop) and
  finishes in that time gives the model its real result; the call's "may have run" result
  (below) is recorded only where no result was. A worker that stays away longer, or died,
  leaves the call with that result once that lock duration has passed.
- **A call that may have run says so (issue 34, finding 12).** A worker SIGSTOPped past its
  lock and woken just after its call was given up ran the call once and succeeded, but the
  model read "the worker running this call stopped 1 times; giving up after 0 retries", with
  no word that it may have run, and might do the side effect again; seen in the first trial
  of each of two runs, after the fix above, which only covers a worker that wakes within that
  lock duration. A call whose worker stopped answering is now reported as what it is. Its
  real result, when the stopped worker records it: a worker's marker write replaces a "may
  have run" one, and a coordinator given a job that ended "may have run", or that BullMQ
  failed as stalled, reads the job's marker for \`YIEM_STOPPED_WORKER_GRACE_MS\` (5 s) before
  it answers. Else an explicit "may have run": the error text \`<tool>: the worker running
  this call stopped answering; the call may have run: check before repeating it (stopped 1
  times, retries: 0)\` (BullMQ's reason for a stalled failure) and \`details: { mayHaveRun:
  true, reason }\` on the call's \`toolResult\` message (\`isMayHaveRun\` in \`@yiem/core\`), never
  a plain failure. A worker that wakes later still records its result in the marker; the
  transcript keeps its one result. The cost: a dead worker's call (no retries left) is
  answered up to the grace later; its job has ended by then, so a limited tool's slot is not
  held for it. \`test/faults/workerFaults.test.ts\` SIGCONTs the stopped worker just after its
  call was given up (the model reads the real result; "giving up" without the fix) and keeps
  it stopped past the grace (the model reads "may have run"; "giving up" without the fix);
  \`test/cluster/stalledToolJob.test.ts\` has BullMQ fail a job as stalled, with and without a
  result recorded within the grace.

## A dead worker and a limited tool

A call holds its job's lock until it ends; a worker that dies mid-call leaves the lock to run
out, then BullMQ's stalled check hands the job out again, and a call with no retries left
waits one more lock for the dead worker's result (see above) before it gets its "may have
run" result. On an ordinary queue that delays only that call. On the queue of a tool limited to
\`concurrency: 1\`, the job holds the only slot, so every call of that tool in the cluster
waited: measured with the default 30 s lock and 30 s stalled check, the tool's next call
started 90 s after the worker was SIGKILLed (30 s for the lock, up to 30 s for the check,
30 s for the wait).

Workers therefore lock the jobs of limited tools' queues for \`YIEM_LIMITED_LOCK_MS\` (5 s,
when shorter than \`YIEM_LOCK_MS\`), renew that lock every 2.5 s and look for stalled jobs
as often. The same kill now blocks the tool for about 15 s at most (the 5 s lock, a stalled
check within 2.5 to 5 s, 5 s for the lost worker's result): 12.2 to 14.8 s measured over five
runs of the scenario above ("worker SIGKILLed mid-call of a concurrency-1 tool"), which runs
with the production defaults. With \`retries\`, the call runs again on another worker
without that last wait (at most 10 s). The cost: a limited tool that blocks its worker's
event loop for more than about 2.5 s loses its lock and is handed out again like a dead
worker's call, within its \`retries\`; with none, the new holder waits for the first one's
result, so it does not run twice. Raise \`YIEM_LIMITED_LOCK_MS\` for such a tool.

## Parked runs and aborts

A run parked for approval is held by no coordinator: no lease, no run slot, no session state
in memory. The request job that started it stays active, locked by the coordinator that took
it in, until the run's response is stored; that coordinator keeps only the job's id, options
and lock token, and renews the lock with all the others it holds in one call. The input is
recorded in the session first and then let go. Measured on a coordinator with 200 runs parked
on 900 KiB inputs (\`test/cluster/parkedMemory.test.ts\`, heap after full collections): the
heap grew by 176 MiB when the job and its input were kept for as long as the approval waits,
and grows by 0.2 MiB (about 1 KiB a run) now. A coordinator killed while it holds such jobs
loses nothing: their locks expire, BullMQ hands them out again, and whichever coordinator takes
one records its input again (a no-op) and completes it with the response once the run is
approved and answers (\`test/cluster/approvals.test.ts\`).

An abort is recorded before it is announced, like a decision:

- **Sent while no coordinator runs.** \`YiemClient.abort\` and \`yiem abort\` write the
  session's \`abortRequested\` mark (the id of its open run) and then publish on the control
  channel. A coordinator started later meets the run through its request job, delivered
  again: a resumed run reads the mark and ends aborted once the calls it left unanswered have
  results (a call running on a worker was cancelled by the announcement; one not dispatched
  yet is not dispatched), without asking the model again; a parked run gets its waiting calls
  denied (\`the session was aborted\`) and ends the same way. The mark is taken into the run,
  so the session's next input runs as usual; a mark naming a run that has ended is dropped,
  and a session with no open run gets none (\`yiem abort\` says there was nothing to abort).
  Each coordinator was SIGTERMed, the abort sent, a coordinator started: the scenarios above
  and \`test/faults/durableAborts.test.ts\`.
- **Sent right after an approval.** The resumed run reads the mark again right before it
  dispatches each call it left unanswered, the approved call included, as the last step
  before adding the call's job: an abort recorded by then keeps the call from running (it
  gets the aborted result, and the run ends aborted). Only an abort recorded after the job
  was added lets the call start, and the announcement then cancels it on its worker. In the
  trials above the abort is sent as soon as the approval is recorded; without the check the
  approved call ran, dispatched after the abort was recorded, in the first trial.

## Child runs (agents calling agents)

A call of another agent (\`agent__<name>\`) is a request of its own, in a session of its own,
and its parent waits for it as for an approval, so each part keeps the guarantees above:

- **The call and its child.** The call is recorded in the parent's session (fenced by the
  lease, once: a resumed batch finds the first record and its child session) before the
  child's request is added under a job id made from that session, so a parent resumed after a
  crash adds nothing twice. The child's input is recorded once per job id like any request's;
  its run resumes on another coordinator when its holder dies, its remote tools attach to
  their jobs.
- **The parent waits parked.** Its batch's other outcomes are stored, its lease and slot
  released; its request job is held by id and lock only, and a coordinator that meets it again
  (the job delivered after a crash) finds it parked and lets it be.
- **The answer.** The coordinator holding the child's job records the answer in the parent
  (at most once: the call's decision) before completing the job. A coordinator killed in
  between leaves the job to be delivered again: the next one finds the answer stored, records
  it again (a no-op) and resumes the parent. The last answer of the batch un-parks the parent;
  whoever resumes it takes each child's answer from its record and appends the batch in call
  order, once.
- **A parent is proved, not claimed.** A request naming a \`parent\` is taken in only when the
  parent session records the call \`parent.callKey\` as waiting for exactly this child session
  (and agent, root, depth and path), checked before anything is written for the request: a
  forged \`parent\` (issue 34, finding 8) fails at once, naming \`parent\`, and publishes
  nothing at the root it named. A child's job delivered again after its first intake is
  taken in for the call recorded then (\`s:{sid}:parent\`), even once the parent's call was
  forgotten. Parent marks written before the check are believed as they were.
- **An abort before the child starts.** A child whose request no coordinator has taken in
  when its parent is aborted gets an \`abortOnStart\` mark in its own slot, in the script that
  would mark an open run (\`abortChildRun-3.lua\`); its run, when some coordinator takes the
  request in, takes the mark as it opens (\`startRun-9.lua\`) and ends \`aborted\` without a model
  or tool call. A root abort no coordinator has carried down yet (every coordinator dead) is
  read from the ancestors when the child's run opens, with the same end.
- **One budget for the tree.** The root run's budget is one ledger in the root's slot
  (\`reserveBudget-1.lua\`): every node reserves each model call there before it makes it, and
  each child start reserves the child's first model call, in one script, so siblings running
  at once cannot jointly spend past it, and a node resumed after a crash reports its usage as
  running totals that never count twice. A tree with \`maxModelCalls: N\` makes at most N model
  calls and starts at most N child runs at any fan-out; tokens, tool calls and cost are counted
  as calls end, so they overrun by at most what the calls in flight use. A start reserved again
  after a crash (the parent killed between the reservation and its record) counts twice: the
  ledger errs toward stopping early (issue 34, finding 4: \`test/cluster/treeBudget.test.ts\`,
  fan-out 32 and depth 3; before, \`maxModelCalls: 3\` cost 73 model calls at fan-out 8 and 1,057
  at 32).

Measured in \`test/faults/agentCallFaults.test.ts\`: a parent calls two child agents (each
running a remote tool for 2.5 s) and one plain tool in one batch on two coordinators, and a
coordinator is SIGKILLed while a child runs its tool, while the parent is parked, and just
after a child answered (the scenarios \`tree of agents: …\` above): each time every tool ran
once, each child's transcript holds one answer, and the parent has one result per call and
one answer. \`test/faults/childAbortBeforeIntake.test.ts\`: the child's request waits on the
paused coordinator queue while the parent is parked, and the root is aborted by a live
coordinator, or while both coordinators are SIGKILLed (a new one started after): once the
queue resumes, the child's job completes \`aborted\` with no model call (the scripted model
got no request for it), its tree entry is \`aborted\`, and the root ends \`aborted\`; without the
mark, the child ran its model in both.

## Transcript writes that are not waited for

A batch's results are appended without waiting for Redis's reply; the run's next write goes
right behind them and both replies are awaited together (\`state/pipelinedTranscript.ts\`).
That next write carries the transcript length it expects, so it changes nothing when the
append did not land (a lost lease, a refused write), and the run stops with the append's
error as it did when the append was awaited; the session is then resumed from what Redis
holds. A coordinator killed between the two loses at most the unanswered append, which the
resume redoes: remote calls attach to their finished jobs, in-process calls are handled as
any interrupted call. A holder that loses its lease at that moment may already have published
the results' \`messageEnd\` and \`turnEnd\` (as it publishes each call's \`toolExecEnd\` before
the append); the next holder publishes them again when it resumes, so a watcher may see an end
twice, never miss one. The scenarios above run with it.

A run's final answer (an answer without tool calls) is not appended on its own: the script that
closes the run appends it (\`finishRun.lua\`, \`coordinator/run/deferredAnswer.ts\`) and stores its
\`messageEnd\` and the turn's \`turnEnd\` in the same step, only if the run closes; a close refused
for a lost lease appends nothing and announces no answer, as an append refused before the close
did. A coordinator killed between the model's answer and the close loses that answer (it was
only in its memory, where the append used to store it one round trip earlier): the resumed run
asks the model again, as after a kill during the model call. A child run's answer is still
appended on its own, its events being its root's too, which the close does not store
(\`test/cluster/eventBatches.test.ts\`, \`test/cluster/runRoundTrips.test.ts\`).

## Dispatch while Redis refuses writes

A remote call whose tool job cannot be added because Redis refuses writes (out of memory under
\`noeviction\`) or is away for a moment (a lost connection, a failover) waits: the add is sent
again with backoff until it lands or the run is aborted (\`coordinator/run/remoteExecutor.ts\`).
It used to become the call's error result ("could not dispatch the call: OOM command not
allowed…"), which the model then answered: the out-of-memory scenario above failed so once in a
clean-clone CI run, when a resumed batch dispatched its call during the outage.
\`test/faults/dispatchDuringOom.test.ts\` dispatches a call while \`maxmemory\` is 1 and frees
memory 1.5 s later: the call gets its tool's result (without the retry, the error result).

## The gateway and its clients (issue 34)

What the gateway keeps when its clients misbehave; each finding was an attack on a running
gateway, each fix is attacked in \`test/gateway/hostileClients.test.ts\` through real HTTP
against real processes (each test fails without its fix).

- **Finding 2: readers that stop reading.** An event stream whose client stopped reading kept
  every event for it in memory (the replay read whole, live events queued without limit,
  heartbeats keeping the socket "active"): 40 stalled streams and ~25 runs with 1 MB answers
  took the gateway out of memory in ~20 s, every tenant with it. Now each stream holds at
  most \`GATEWAY_STREAM_QUEUE_EVENTS\` (256) events and \`GATEWAY_STREAM_QUEUE_BYTES\` (1 MiB)
  for its client, reads the replay a page at a time as the client takes it, writes the next
  event only after the socket's \`drain\`, and skips heartbeats while the socket is full; a
  client that falls behind (its queue overflows, or it took nothing for a heartbeat interval)
  is cut and resumes from \`Last-Event-ID\`, losing nothing. The test stalls 40 readers
  (paused sockets, queues of 8 events and 64 KiB) through 12 runs of 128 KiB answers: the
  gateway's RSS grows about 25 MiB (150 MiB without the bounds), and a cut reader, resumed
  from the last event it received whole, has every event exactly once.
  \`docs/PERFORMANCE.md\` ("Stalled readers") measures 500 stalled and 500 live readers.
- **Finding 9: one key's streams lock out every other key.** 256 event streams of one key
  filled the connection cap and every other key's connection was reset. Open streams and
  requests waiting on an answer are capped per key and gateway below the connection cap
  (\`GATEWAY_KEY_MAX_STREAMS\`, \`GATEWAY_KEY_MAX_LONG_REQUESTS\`): \`429\` for that key, the
  others unaffected.
- **Finding 10: stream tokens outlive key rotation.** A token is bound to its key's hash and
  lives an hour from when it was made, never renewed.
- **Finding 14: an empty keys file.** A keys file read between a truncate and the write
  counted as "no keys": every key got \`401\` and every open stream was cut. A file without any
  entry is now unusable (the last good keys stay; an error says why); \`[]\` on a line of its
  own serves no key on purpose.
- **Finding 11: work per request grew with the cluster.** Naming a new session paged through
  the coordinator queue's backlog (2,076 Redis commands per request with 2,000 jobs waiting);
  \`GET /v1/sessions\` read every listed transcript whole to sum usage; \`GET /v1/approvals\`
  read every call awaiting approval in the cluster with its arguments before keeping the key's.
  Now each costs what it returns: a session's \`known\` mark (written by \`send\` and by every
  recorded input) makes \`hasSession\` one \`EXISTS\`; \`finishRun\` stores a usage summary
  the list reads; a tree's index of its calls awaiting approval, on its root session, is what
  a key's list reads (\`test/gateway/requestCosts.test.ts\` counts the commands). Data written
  before: a session with no \`known\` mark is still found by its transcript, events or lease,
  and a request of it still waiting in the queue (from a client older than the mark, or a
  plain BullMQ client) makes it known once a coordinator takes it in; a session with no usage
  summary is summed from its transcript until its next run closes; a call awaiting approval
  recorded before the tree index is added to it by the approvals sweep (every 30 s, a page of
  the cluster-wide index at a time), and listed from then on.
- **Findings 5, 6 and 7: child runs, handoffs and parked runs on the faces.** Attacked in
  \`test/gateway/treeFaces.test.ts\` (each test fails without its fix). A key that sees only
  its own sessions could not list or decide a call waiting in its own child run (an empty
  list, \`404\`, \`409\`), so with no approval timeout the run stayed parked for good; \`/v1/chat\`
  decided a child's call in the root session (\`409\`). Ownership now follows the run: a child
  run's session is its root owner's, and every face decides a call in the session where it
  waits. After a handoff, a follow-up naming no agent was refused ("belongs to agent
  billing"): the session's current agent answers it now, and a key's \`agents\` is checked
  against that agent (a handoff outside the scope makes the next request \`403\`, saying so); a
  new session naming no agent goes to \`default\` or the only agent, else it is refused at
  intake, where it used to end with an error (issue 30). \`/v1/chat/completions\` never
  answered once its run parked for approval, and \`/v1/chat\` never ended when the call waited
  in a child run, each hung request holding a connection: each face now ends its answer once
  the run waits for a decision, saying so in its protocol (OpenAI's: \`finish_reason: "stop"\`,
  text naming the calls and the \`yiem\` extension field; the AI SDK's: the approval requests,
  a child's included, and finish reason \`tool-calls\`).
## No input ends a shared process

A process ended by an input is restarted into the same input: a coordinator's run is resumed
by the next coordinator, a worker's job handed to the next worker, so one hostile input could
end every process it reaches in turn. Issue 34 tried such inputs; each now fails its own
call, listing or request, and the process keeps serving:

- **Deep arguments no longer end a process (finding 1).** Arguments nested ~1,000 levels for a
  \`defineTool\` tool with a recursive zod schema ended the coordinator (an unhandled rejection:
  zod retried a parse that overflowed the stack asynchronously, and the validator dropped that
  promise), then each coordinator that resumed the run; on a worker-only tool, the worker. Now
  arguments nesting more than 64 levels (\`YIEM_MAX_ARGUMENT_DEPTH\`) are that call's error
  result before anything parses or validates them, and a schema that throws or rejects is
  that call's error result.
- **Deep arguments no longer end a run (finding 16).** Arguments ~2,500 levels deep overflowed
  the reading of the model's answer and ended the run; reading a call never throws now.
- **A never-ending tool listing no longer ends a worker (finding 3).** Every MCP tools/list
  is bounded in pages, tools, bytes and time; past a bound the listing fails with an error
  naming it, the worker gets ready (or keeps the server's last tools) and serves the rest.
- **A \`list_changed\` flood no longer floods the log (finding 15):** one listing at a time, at
  most one a second, logged at info level only when the tools changed.
- **Deep JSON at the gateway is a 400, not a 500 (finding 13).**
- **MCP names can no longer pass for agent calls or collapse silently (finding 17):** refused
  at load, or skipped with a warning naming both tools.
- **The last resort:** the coordinator, tool worker and gateway log an unhandled promise
  rejection with its context (\`unhandled promise rejection; the process keeps serving\`) and go
  on serving, where Node ended them.

\`test/cluster/hostileArguments.test.ts\` sends hostile arguments to every kind of tool (zod and
JSON Schema tools on the coordinator and on a worker, an MCP tool, \`writeTool\`, a written
tool, an agent call) on one cluster: each call is an error result, every run finishes, no
process ends or logs an unhandled rejection, and each tool then serves a valid call.
\`test/mcp/hostileMcp.test.ts\` runs a worker with a small heap against servers that list
forever, at start and later, and flood \`list_changed\`: it gets ready, logs each bound, and
keeps serving.

## Failover on a Redis Cluster

Redis Cluster replicates asynchronously: a write a master acknowledged just before it died
may be missing on the replica that takes its place. What Yiem guarantees then:

- **Session writes wait for a replica.** The writes a run cannot lose (recording an input,
  opening a run, moving inputs into it, appending to the transcript, storing the response,
  approval requests and decisions) are followed, in the same round trip and on the same
  node, by \`WAIT 1 250\` (\`YIEM_REPLICA_ACKS\`, default 1 on a cluster). They count as done
  once a replica has them. A write no replica acknowledged within 250 ms stands but is
  unprotected; the coordinator logs a warning (at most one per 10 s). Lease writes are not
  waited for: a lease lost in a failover only fences its holder out, and the run is resumed.
- **What is lost anyway is redone.** A request job stays in the coordinator queue until its
  run's response is stored, so an input record lost with a master is recorded again when the
  job is handed out again; a run whose lease or state went back in time is taken over and
  resumed from its transcript.
- **Tool calls are at-least-once.** BullMQ's own writes (adding, completing jobs) are not
  waited for. A tool job whose completion was lost is handed out again: the worker finds the
  job's finished marker and completes it with the stored result, without running the tool.
  Only when the marker was lost too does the tool run again; the scenario above counts these
  ("ran twice"). A transcript never holds two results for one call.
- **Processes ride it out.** Connections that must not give up wait through the failover
  (ioredis redirections and retries); BullMQ's blocking fetch fails fast instead and is
  retried, because its watchdog's reconnect of a cluster connection can otherwise hang and the
  coordinator would stop fetching. Even so, a blocking fetch still wedged in most failovers
  tried (for over 30 s now and then): a coordinator whose blocking fetch has not returned in
  5 s fetches without blocking, every 250 ms on its command connection, until it returns, and
  the failover scenario checks that each coordinator alone answers a new run afterwards. The
  cost of the replica acknowledgements is measured in \`docs/PERFORMANCE.md\` ("Redis
  Cluster").
- **Tool workers take calls again, unguarded.** The scenario of
  \`test/faults/redisClusterWorkerFailover.test.ts\` SIGKILLs the master under a tool queue
  shard, then has each worker alone (the others SIGSTOPped) answer new calls of that shard
  within 20 s. In 19 runs (node timeouts of 2 s and 8 s, so failovers of 4 s and of 9 to 13 s;
  the killed master with and without the coordinator queue; four runs with the workers' drain
  delay set to 1 s for the trial, as the coordinator's) no worker wedged and the slowest call
  took 8 s, so the workers have no guard like the coordinator's. A blocking fetch that only
  never answers is ended by BullMQ's own watchdog (block time plus 1 s, 6 s on a worker), and
  the worker then fetches; a worker stays wedged only when that watchdog's reconnect hangs,
  which the scenario fails on (checked by hanging it on purpose). The first call after the
  running worker changes may wait one drain delay (5 s): the stopped worker's pending
  blocking fetch took the queue's wake-up marker.

## Durability: what a crash may lose

How much of what Redis acknowledged survives a crash is the deployment's choice, made in
Redis's configuration (Yiem sends the same commands either way). Every guarantee in this
document assumes the first row, which \`docker-compose.yml\` ships and the fault suite and
\`npm run chaos\` run on:

| level | Redis settings | a crash of Redis (SIGKILL, OOM kill) loses | a crash of the machine (kernel panic, power cut) loses |
| --- | --- | --- | --- |
| **safe** (the default) | \`appendonly yes\`, \`appendfsync always\` | nothing acknowledged | nothing acknowledged (the AOF is fsynced before Redis answers a write) |
| fast | \`appendonly yes\`, \`appendfsync everysec\` | up to about 2 s of writes while a background fsync is slow (Redis then answers writes it has not yet written to the AOF); else nothing | up to about the last second of acknowledged writes (two while the disk is slow) |
| none | \`appendonly no\` (snapshots only, or none) | everything since the last snapshot | everything since the last snapshot |

What a lost write means for Yiem: an input a client was told is queued (\`send\` resolved) may
vanish and never run; a transcript append, a stored response or a finished tool job's marker
may go back in time, so a resumed run redoes its last model call and may run a tool call
again (at-least-once, as after a failover above); a lease or a fencing write may go back, so a
coordinator fenced out before the crash may write once more. None of this happens on the safe
level. On a Redis Cluster, \`YIEM_REPLICA_ACKS\` (default 1) adds the replica's copy: a session
write counts as done once a replica has it (\`WAIT\`), so a master lost with its disk loses none
of those writes either ("Failover on a Redis Cluster" above).

The cost is measured by \`npm run bench -- --peers\` in the same rounds as the peers:
docs/PERFORMANCE.md, "Peers" ("The cost of durability"); the replica acknowledgements' cost
is in its "Redis Cluster" section. Choose \`everysec\` only where losing the last second of
work on a machine crash is acceptable.

${renderChaos(chaos)}`;
}

const figures = await readFigures();
await writeFile(join(root, "docs/RELIABILITY.md"), render(figures, await readChaosFigures()));
console.log(`docs/RELIABILITY.md: ${figures.length} scenarios`);
