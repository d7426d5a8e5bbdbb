import type { AgentMessage } from "@yiem/core";
import { approves } from "../approver.js";
import { CHAOS_TOOLS, type ChaosToolName } from "../plan.js";
import { type Finding, note, violation } from "./findings.js";
import type { LedgerEntry } from "./ledger.js";

/** A chaos call as the transcripts show it. */
interface ObservedCall {
  sessionId: string;
  tool: ChaosToolName;
  /** The text of its result, and whether it was an error. */
  result?: { text: string; isError: boolean };
}

/** What the side-effect check counted, for the report. */
export interface SideEffectCounts {
  calls: number;
  executions: number;
  /** Calls that ran more than once where the docs allow it (retries, idempotent, failover). */
  atLeastOnceReruns: number;
  /** Calls that ran more than the docs allow. */
  duplicated: number;
}

function isChaosTool(name: string): name is ChaosToolName {
  return name in CHAOS_TOOLS;
}

function observedCalls(transcripts: Map<string, AgentMessage[]>): Map<string, ObservedCall> {
  const calls = new Map<string, ObservedCall>();
  for (const [sessionId, messages] of transcripts) {
    for (const message of messages) {
      if (message.role === "assistant") {
        for (const block of message.content) {
          if (block.type !== "toolCall" || !isChaosTool(block.name)) continue;
          calls.set(String(block.arguments.label ?? block.id), { sessionId, tool: block.name });
        }
      } else if (message.role === "toolResult") {
        const call = calls.get(message.toolCallId);
        if (!call) continue;
        const text = message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        call.result = { text, isError: message.isError };
      }
    }
  }
  return calls;
}

/**
 * Compares the ledger (executions the tools recorded outside Redis) with the calls of the
 * transcripts. The most executions a call may have, from docs/RELIABILITY.md: a remote call
 * once (retries 0) or once per try (retries 1: twice); an in-process call that is not
 * idempotent once; an approval call once if approved, never if denied; an idempotent
 * in-process call as often as coordinators took its run over. On a Redis Cluster, a remote
 * call may run again after a failover lost its finished marker (at-least-once): counted as a
 * note. A call that ran but no transcript holds, or whose ok result no execution backs, is
 * a violation.
 */
export function checkSideEffects(options: {
  transcripts: Map<string, AgentMessage[]>;
  ledger: LedgerEntry[];
  seed: number;
  cluster: boolean;
}): { findings: Finding[]; counts: SideEffectCounts } {
  const findings: Finding[] = [];
  const calls = observedCalls(options.transcripts);
  const executions = new Map<string, number>();
  for (const entry of options.ledger)
    executions.set(entry.label, (executions.get(entry.label) ?? 0) + 1);
  const counts: SideEffectCounts = {
    calls: calls.size,
    executions: options.ledger.length,
    atLeastOnceReruns: 0,
    duplicated: 0,
  };
  for (const label of executions.keys())
    if (!calls.has(label))
      findings.push(violation("side effects", label, "ran, but no transcript holds its call"));
  for (const [label, call] of calls) {
    const ran = executions.get(label) ?? 0;
    const denied = call.tool === "chaosApproval" && !approves(options.seed, label);
    const bound = denied ? 0 : CHAOS_TOOLS[call.tool].maxRuns;
    const remote =
      call.tool === "chaosRemote" ||
      call.tool === "chaosRemoteRetried" ||
      call.tool === "chaosApproval";
    if (ran > bound && !(options.cluster && remote && !denied)) {
      counts.duplicated++;
      findings.push(
        violation(
          "side effects",
          label,
          `${call.tool} (${CHAOS_TOOLS[call.tool].where}${denied ? ", denied" : ""}) ran ${ran} times; at most ${bound} allowed (session ${call.sessionId})`,
        ),
      );
    } else if (ran > 1) {
      counts.atLeastOnceReruns++;
      findings.push(
        note(
          "side effects",
          label,
          `${call.tool} ran ${ran} times (${CHAOS_TOOLS[call.tool].where}${options.cluster && ran > bound ? ", after a failover" : ""})`,
        ),
      );
    }
    if (call.result && !call.result.isError && call.result.text === `${label} ok` && ran === 0)
      findings.push(violation("side effects", label, `${call.tool} answered ok but never ran`));
  }
  return { findings, counts };
}
