import type { AgentMessage } from "@yiem/core";
import type { SentInput } from "../workload.js";
import { type Finding, note, violation } from "./findings.js";
import type { OpenJobRecord, RequestJobRecord } from "./snapshot.js";

/** Job states that mean "not answered yet". */
const OPEN_STATES = ["active", "waiting", "delayed", "prioritized", "paused", "waiting-children"];

/** What the request check counted, for the report. */
export interface RequestCounts {
  jobs: number;
  answered: number;
  /** Inputs recorded twice, or answered with two different responses. */
  duplicates: number;
}

function userTexts(messages: AgentMessage[]): string[] {
  return messages.flatMap((m) => {
    if (m.role !== "user") return [];
    if (typeof m.content === "string") return [m.content];
    return [m.content.map((part) => (part.type === "text" ? part.text : "")).join("")];
  });
}

/** One open job, as a violation names it: what it runs, for whom, since when, who holds it. */
function describeOpenJob(job: OpenJobRecord): string {
  const parts = [`job ${job.id} (${job.name}`];
  if (job.sessionId) parts.push(`, session ${job.sessionId}`);
  if (job.toolCallId) parts.push(`, call ${job.toolCallId}`);
  parts.push(`, ${job.attemptsStarted} attempt(s)`);
  if (job.startedAgoMs !== undefined) parts.push(`, started ${job.startedAgoMs} ms before`);
  parts.push(
    job.lock ? `, locked by ${job.lock.token} for ${job.lock.ttlMs} ms more)` : ", no lock)",
  );
  return parts.join("");
}

/** The violation's detail for `n` jobs left `state` in `queue`, each named when known. */
function openJobsDetail(
  queue: string,
  state: string,
  n: number,
  openJobs: OpenJobRecord[] | undefined,
): string {
  const named = (openJobs ?? []).filter((j) => j.queue === queue && j.state === state);
  const detail = `${n} job(s) left ${state} after the load drained`;
  return named.length === 0 ? detail : `${detail}: ${named.map(describeOpenJob).join("; ")}`;
}

/**
 * Checks every request job: none left open or failed in any queue; each completed job's
 * answer is the response stored in its session; each job's input recorded exactly once in
 * its session's transcript; no input in a transcript without its job; every input the
 * workload sent has its job.
 */
export function checkRequests(options: {
  requests: RequestJobRecord[];
  queueCounts: Record<string, Record<string, number>>;
  /** The open jobs themselves, to name them in the violation. */
  openJobs?: OpenJobRecord[];
  transcripts: Map<string, AgentMessage[]>;
  sent: SentInput[];
}): { findings: Finding[]; counts: RequestCounts } {
  const findings: Finding[] = [];
  const counts: RequestCounts = { jobs: options.requests.length, answered: 0, duplicates: 0 };
  for (const [queue, byState] of Object.entries(options.queueCounts)) {
    for (const state of OPEN_STATES) {
      const n = byState[state] ?? 0;
      if (n > 0)
        findings.push(
          violation("requests", queue, openJobsDetail(queue, state, n, options.openJobs)),
        );
    }
    // A failed request job is checked below; a failed tool job is a call whose worker died
    // with its retries spent (or a refused retry), a failed decision one that came too late.
    const failed = byState.failed ?? 0;
    if (failed > 0 && !queue.includes("coordinator"))
      findings.push(
        note(
          "requests",
          queue,
          `${failed} job(s) failed (by design: a call given up after its worker died, a refused retry, a late decision)`,
        ),
      );
  }
  const inputsOf = new Map<string, string[]>();
  for (const [sessionId, messages] of options.transcripts)
    inputsOf.set(sessionId, userTexts(messages));
  const jobInputs = new Set(options.requests.map((r) => `${r.sessionId}\n${r.input}`));
  for (const job of options.requests) {
    if (job.state !== "completed") {
      findings.push(
        violation(
          "requests",
          job.id,
          `request ${job.state}${job.failedReason ? `: ${job.failedReason}` : ""}`,
        ),
      );
      continue;
    }
    const response = job.result?.response;
    if (!response) {
      findings.push(violation("requests", job.id, "completed without a response"));
      continue;
    }
    if (!job.storedResponse)
      findings.push(violation("requests", job.id, "no response stored in its session"));
    else if (JSON.stringify(job.storedResponse) !== JSON.stringify(response)) {
      counts.duplicates++;
      findings.push(
        violation(
          "requests",
          job.id,
          "its job's answer differs from the stored response (answered twice)",
        ),
      );
    }
    const recorded = (inputsOf.get(job.sessionId) ?? []).filter(
      (text) => text === job.input,
    ).length;
    if (recorded !== 1) {
      if (recorded > 1) counts.duplicates++;
      findings.push(
        violation(
          "requests",
          job.id,
          `its input is recorded ${recorded} times in session ${job.sessionId}`,
        ),
      );
      continue;
    }
    counts.answered++;
  }
  for (const [sessionId, texts] of inputsOf)
    for (const text of texts)
      if (!jobInputs.has(`${sessionId}\n${text}`))
        findings.push(violation("requests", sessionId, `input "${text}" has no request job`));
  const jobIds = new Set(options.requests.map((r) => r.id));
  for (const input of options.sent) {
    if (!jobIds.has(input.runId))
      findings.push(
        violation("requests", input.runId, `sent (${input.label}) but its job is gone`),
      );
    else if (input.answered === undefined)
      findings.push(
        note(
          "requests",
          input.runId,
          `${input.label} was answered after the workload stopped waiting`,
        ),
      );
  }
  return { findings, counts };
}
