import type { AgentMessage, ChildRun } from "@yiem/core";
import { CHILD_CALL_TOOL } from "../plan.js";
import { type Finding, note, violation } from "./findings.js";
import type { RequestJobRecord } from "./snapshot.js";

/** What the tree check counted, for the report. */
export interface TreeCounts {
  /** Calls of the child agent in the transcripts. */
  childCalls: number;
  /** Calls whose result is their child's answer. */
  answered: number;
  /** Calls answered as aborted (their tree was aborted). */
  aborted: number;
}

/** A child agent's call as its parent's transcript shows it. */
interface ChildCall {
  sessionId: string;
  callKey: string;
  results: Array<{ text: string; isError: boolean }>;
}

/** The text an abort gives a call whose child had not answered (`approvalDecisions.ts`). */
const NOT_ANSWERED_ABORTED = /did not answer: the session was aborted/;

function textOf(message: AgentMessage): string {
  if (message.role === "user" && typeof message.content === "string") return message.content;
  const content = message.content as Array<{ type: string; text?: string }>;
  return content.map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("");
}

function childCallsOf(transcripts: Map<string, AgentMessage[]>): ChildCall[] {
  const calls: ChildCall[] = [];
  for (const [sessionId, messages] of transcripts) {
    const ofSession = new Map<string, ChildCall>();
    for (const message of messages) {
      if (message.role === "assistant") {
        for (const block of message.content) {
          if (block.type !== "toolCall" || block.name !== CHILD_CALL_TOOL) continue;
          const call: ChildCall = { sessionId, callKey: block.id, results: [] };
          ofSession.set(block.id, call);
          calls.push(call);
        }
      } else if (message.role === "toolResult") {
        ofSession
          .get(message.toolCallId)
          ?.results.push({ text: textOf(message), isError: message.isError });
      }
    }
  }
  return calls;
}

/** The final answers (assistant messages without tool calls) of a transcript. */
function finalAnswers(messages: AgentMessage[]): number {
  return messages.filter(
    (m) => m.role === "assistant" && !m.content.some((block) => block.type === "toolCall"),
  ).length;
}

/** Checks one child call against its child run; returns how it was answered. */
function checkChildCall(
  call: ChildCall,
  options: TreeCheckInput,
  findings: Finding[],
): "answered" | "aborted" | "other" {
  const subject = `${call.sessionId} ${call.callKey}`;
  const report = (detail: string) => findings.push(violation("tree", subject, detail));
  if (call.results.length !== 1) report(`the parent got ${call.results.length} results`);
  const result = call.results[0];
  const entry = options.children.get(call.sessionId)?.find((c) => c.callKey === call.callKey);
  if (!entry) {
    if (result?.isError) findings.push(note("tree", subject, "an error result, no child run"));
    else report("answered without a child run");
    return "other";
  }
  if (entry.status === "running") report(`child ${entry.sessionId} still running after the drain`);
  const jobs = options.requests.filter((r) => r.sessionId === entry.sessionId);
  if (jobs.length !== 1) report(`child ${entry.sessionId} has ${jobs.length} request jobs`);
  const job = jobs[0];
  if (job?.parent?.sessionId !== call.sessionId || job.parent.callKey !== call.callKey)
    report(`child ${entry.sessionId}'s request names another parent call`);
  const response = job?.result?.response;
  if (!result || !response) return "other";
  if (result.isError && NOT_ANSWERED_ABORTED.test(result.text)) return "aborted";
  if (response.stopReason !== "stop") {
    if (!result.isError) report(`an ok result though the child ended ${response.stopReason}`);
    return response.stopReason === "aborted" ? "aborted" : "other";
  }
  const answer = textOf(response);
  if (result.isError || result.text !== answer || answer !== `done ${call.callKey}`)
    report(`the result "${result.text}" is not the child's answer "${answer}"`);
  const transcript = options.transcripts.get(entry.sessionId) ?? [];
  if (finalAnswers(transcript) !== 1)
    report(`child ${entry.sessionId} answered ${finalAnswers(transcript)} times`);
  return "answered";
}

/** What the tree check reads. */
export interface TreeCheckInput {
  transcripts: Map<string, AgentMessage[]>;
  children: Map<string, ChildRun[]>;
  requests: RequestJobRecord[];
}

/**
 * Checks the soak's trees of agents: each call of the child agent got exactly one result, and
 * its child run exactly one request job naming that call, ended (not left running); a child
 * that answered answered once, and its answer is the call's result (`done <call label>`); a
 * child that did not (aborted with its tree) gave an error result. Every child request names
 * a call its parent made and lists.
 */
export function checkTrees(options: TreeCheckInput): { findings: Finding[]; counts: TreeCounts } {
  const findings: Finding[] = [];
  const calls = childCallsOf(options.transcripts);
  const counts: TreeCounts = { childCalls: calls.length, answered: 0, aborted: 0 };
  for (const call of calls) {
    const outcome = checkChildCall(call, options, findings);
    if (outcome !== "other") counts[outcome]++;
  }
  const made = new Set(calls.map((c) => `${c.sessionId}\n${c.callKey}`));
  for (const job of options.requests) {
    if (!job.parent) continue;
    const listed = options.children
      .get(job.parent.sessionId)
      ?.find((c) => c.callKey === job.parent?.callKey);
    if (!made.has(`${job.parent.sessionId}\n${job.parent.callKey}`) || !listed)
      findings.push(violation("tree", job.id, "a child request no call of its parent made"));
    else if (listed.sessionId !== job.sessionId)
      findings.push(violation("tree", job.id, "a second child session for one call"));
  }
  return { findings, counts };
}
