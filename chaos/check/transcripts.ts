import type { AgentMessage } from "@yiem/core";
import { type Finding, violation } from "./findings.js";

function callIdsOf(message: AgentMessage): string[] {
  if (message.role !== "assistant") return [];
  return message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : []));
}

/**
 * Checks that a session's transcript is well formed: every tool call id appears in one call
 * and gets exactly one result; a message's results come right after it, in call order; no
 * result stands without its call. (A transcript may end with results or an input: an aborted
 * run's answer is its stored response, not a message of the transcript.)
 */
export function checkTranscript(sessionId: string, messages: AgentMessage[]): Finding[] {
  const findings: Finding[] = [];
  const report = (detail: string) => findings.push(violation("transcripts", sessionId, detail));
  const calls = new Set<string>();
  const results = new Map<string, number>();
  for (const [i, message] of messages.entries()) {
    const ids = callIdsOf(message);
    for (const id of ids) {
      if (calls.has(id)) report(`call id ${id} appears in two calls`);
      calls.add(id);
    }
    if (ids.length > 0) {
      const following = messages
        .slice(i + 1, i + 1 + ids.length)
        .map((m) => (m.role === "toolResult" ? m.toolCallId : `(${m.role})`));
      if (following.join(",") !== ids.join(","))
        report(
          `message ${i} calls ${ids.join(",")} but is followed by ${following.join(",") || "nothing"}`,
        );
    }
    if (message.role !== "toolResult") continue;
    results.set(message.toolCallId, (results.get(message.toolCallId) ?? 0) + 1);
    if (!calls.has(message.toolCallId)) report(`result for ${message.toolCallId} without its call`);
  }
  for (const [id, count] of results) if (count > 1) report(`call ${id} has ${count} results`);
  for (const id of calls) if (!results.has(id)) report(`call ${id} has no result`);
  return findings;
}
