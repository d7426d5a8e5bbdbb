import type { BurstFigures, FollowUpBurst } from "../../measurements/followUpBurst.js";
import { type Summary, summarize } from "../../sampling/stats.js";
import type { Measured } from "../results.js";
import { count, num, table } from "./markdown.js";

function burstRow(b: BurstFigures): string[] {
  return [
    count(b.size),
    `${count(b.answered)}/${count(b.size)}`,
    num(b.commandsPerFollowUp, 1),
    `${num(b.wallMs / 1000)} s`,
    num(b.answered / (b.wallMs / 1000), 0),
  ];
}

function waitRow(name: string, s: Summary, target: string): string[] {
  return [name, String(s.count), num(s.p50, 1), num(s.p99, 1), num(s.max, 1), target];
}

/** How many plain messages (idle or probes) went unanswered, in words. */
function unansweredWords(unanswered: number, maxMs: number): string {
  const within = `within ${maxMs / 1000} s`;
  if (unanswered === 0) return `every plain message was answered ${within}`;
  return `${unanswered} plain message${unanswered === 1 ? "" : "s"} went unanswered ${within}`;
}

/** What the probes queued behind tells about the slow ones, in words. */
function probeQueueing(f: FollowUpBurst): string {
  const samples = f.otherSessionSamples;
  const behind = samples.filter((_, i) => (f.otherSessionWaitingAhead[i] ?? 0) > 0);
  const clear = summarize(
    samples.filter((ms, i) => f.otherSessionWaitingAhead[i] === 0 && Number.isFinite(ms)),
  );
  const afterDrain = clear.count
    ? `The ${clear.count} added once no follow-up was left waiting were answered in
${num(clear.p50, 1)} ms at the median and ${num(clear.max, 1)} ms at most.`
    : "None was added once no follow-up was left waiting.";
  if (!behind.length)
    return `No probe found follow-ups of the burst still waiting in the coordinator queue. ${afterDrain}`;
  const most = Math.max(...f.otherSessionWaitingAhead);
  const which = behind.length === 1 ? "One probe was" : `${behind.length} probes were`;
  const took = behind.length === 1 ? "It took" : "They took at most";
  return `${which} added while follow-ups of the burst were still waiting in the coordinator
queue, not yet taken by the coordinator (up to ${count(most)} of them): the queue hands out jobs
in the order they were added, so such a message waits until the coordinator has taken every
follow-up ahead of it. ${took} ${num(Math.max(...behind), 1)} ms. ${afterDrain}`;
}

/** The follow-up burst: Redis commands per follow-up, and another session's wait meanwhile. */
export function followUpBurstSection(m: Measured): string {
  const f = m.followUpBurst;
  const p = m.plan.followUpBurst;
  const target = f.otherSession.p99 <= 250 ? "**met**" : "**missed**";
  const bursts = [
    burstRow(f.small),
    burstRow(f.large),
    [
      `ratio ${count(f.large.size)} / ${count(f.small.size)} (target ≤ 1.5)`,
      "",
      num(f.ratio),
      "",
      "",
    ],
  ];
  const waits = [
    waitRow("idle cluster, before the bursts", f.idle, "–"),
    waitRow(
      `during the burst of ${count(f.large.size)}`,
      f.otherSession,
      `≤ 250 ms at p99: ${target}`,
    ),
  ];
  const each = f.otherSessionSamples
    .map((ms, i) => `${num(ms, 0)} (${f.otherSessionWaitingAhead[i] ?? "?"})`)
    .join(", ");
  const probeShare = (p.probes * f.commandsPerMessage) / f.large.size;
  return `## Follow-up burst

A cluster of its own, started as the tests start one (\`startTestCluster\`): one coordinator
and one tool worker process (\`node --import tsx\`), a private \`redis-server\`, and a scripted
model that answers every request at once with a short text. Requests are added with plain
BullMQ to the \`coordinator\` queue, answers seen through one \`QueueEvents\` 'completed'
listener. First ${p.idleMessages} plain messages to fresh sessions, one after another (warm-up and
baseline); then ${count(f.small.size)} follow-ups (\`followUp: true\`, one \`queue.addBulk\` with
explicit job ids) to one fresh session; then ${count(f.large.size)} to another. Redis commands are
\`total_commands_processed\` (\`INFO stats\`, the whole server, background polling included)
before the \`addBulk\` and after the last answer, divided by the burst size. The wall time runs
from the \`addBulk\` to the last answer.

${table(["burst", "answered", "Redis commands per follow-up", "wall time", "answered/s"], bursts)}

The ${count(f.large.size)} figure includes the probes below:
${p.probes} plain messages at ${num(f.commandsPerMessage, 1)} commands each (as measured on the
idle cluster) add ${num(probeShare, 1)} commands per follow-up.

### Another session during the burst (ms)

Once ${count(p.probesAfter)} follow-ups of the ${count(f.large.size)} had been answered, ${p.probes}
plain messages to other, fresh sessions (no \`sessionId\`), each sent after the previous one was
answered; the time runs from \`queue.add\` to the job's 'completed' event.

${table(["plain message to another session", "n", "median", "p99", "max", "target"], waits)}

Of the ${f.otherSession.count} probes answered, ${f.probesDuringBurst} came back while the burst
still had unanswered follow-ups; ${unansweredWords(f.unanswered, p.maxMessageMs)}. Each, in the
order sent, in ms (jobs waiting in the coordinator queue when it was added): ${each}.

${probeQueueing(f)}`;
}
