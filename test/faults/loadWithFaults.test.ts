import { randomUUID } from "node:crypto";
import type { AgentMessage, AssistantMessage } from "@yiem/core";
import { describe, expect, it } from "vitest";
import { recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

const SESSIONS = Number(process.env.YIEM_LOAD_SESSIONS ?? 500);
const TURNS = 3;
const WORKERS = 4;

const { cluster, ledger } = useLedgerCluster({
  workers: WORKERS,
  coordinators: 2,
  model: { respond: faultModel },
  env: { LOG_LEVEL: "info" },
});

/** SIGKILLs a random live worker every `everyMs` and starts a replacement, until stopped. */
function killWorkersAtRandom(everyMs: number): { stop(): Promise<number> } {
  let kills = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      if (stopped) break;
      const alive = cluster.workers.filter(
        (w) => w.child.exitCode === null && w.child.signalCode === null,
      );
      const victim = alive[Math.floor(Math.random() * alive.length)];
      if (!victim) continue;
      victim.signal("SIGKILL");
      kills++;
      await cluster.addWorker();
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return kills;
    },
  };
}

/**
 * Checks one session's transcript: every call answered once, in call order, right after the
 * message that made it; no result without its call; three turns.
 */
function checkTranscript(messages: AgentMessage[]): { calls: number; problems: string[] } {
  const problems: string[] = [];
  let calls = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as AgentMessage;
    if (message.role !== "assistant") continue;
    const ids = message.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
    const results = messages
      .slice(i + 1, i + 1 + ids.length)
      .map((m) => (m.role === "toolResult" ? m.toolCallId : "missing"));
    if (JSON.stringify(results) !== JSON.stringify(ids))
      problems.push(`results ${results} for calls ${ids}`);
    calls += ids.length;
  }
  const answered = new Set<string>();
  let asked = new Set<string>(); // the calls of the latest assistant message
  for (const m of messages) {
    if (m.role === "assistant")
      asked = new Set(m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])));
    if (m.role !== "toolResult") continue;
    if (answered.has(m.toolCallId)) problems.push(`call ${m.toolCallId} answered twice`);
    if (!asked.has(m.toolCallId)) problems.push(`result ${m.toolCallId} answers no call before it`);
    answered.add(m.toolCallId);
  }
  if (messages.filter((m) => m.role === "user").length !== TURNS)
    problems.push("a turn is missing");
  if (calls !== TURNS * 2) {
    const shape = messages.map((m) =>
      m.role === "assistant"
        ? `assistant(${m.content.filter((b) => b.type === "toolCall").length})`
        : m.role === "user"
          ? `user(${JSON.stringify(m.content).match(/t\d/)?.[0]})`
          : m.role,
    );
    problems.push(`${calls} calls for ${TURNS} turns: ${shape.join(" ")}`);
  }
  return { calls, problems };
}

describe("faults: load with random worker kills", () => {
  it(`completes ${SESSIONS} sessions × ${TURNS} turns while workers are killed, every call answered once and in order`, async () => {
    const chaos = killWorkersAtRandom(1500);
    const started = Date.now();
    const sessions = Array.from({ length: SESSIONS }, () => randomUUID());
    const runIds: string[] = [];
    for (const [s, sessionId] of sessions.entries()) {
      for (let turn = 1; turn <= TURNS; turn++) {
        const { runId } = await cluster.client.send(`ledgerRemote s${s}t${turn} 20 2`, {
          sessionId,
          followUp: turn > 1,
        });
        runIds.push(runId);
      }
    }
    const responses: AssistantMessage[] = [];
    for (let i = 0; i < runIds.length; i += 100) {
      const chunk = runIds
        .slice(i, i + 100)
        .map((id) => cluster.client.waitForResponse(id, { timeoutMs: 240_000 }));
      responses.push(...(await Promise.all(chunk)));
    }
    const kills = await chaos.stop();
    const elapsedMs = Date.now() - started;
    const lost = responses.filter((r) => r.stopReason !== "stop").length;
    let calls = 0;
    const problems: string[] = [];
    for (const sessionId of sessions) {
      const checked = checkTranscript(await cluster.client.messages(sessionId));
      calls += checked.calls;
      problems.push(...checked.problems.map((p) => `${sessionId}: ${p}`));
    }
    const executions = (await ledger.entries()).length;
    await recordFigure({
      scenario: `load: ${SESSIONS} sessions × ${TURNS} turns with random worker kills`,
      runs: responses.length,
      calls,
      lost,
      duplicated: problems.filter((p) => p.includes("twice")).length,
      note: `${kills} workers SIGKILLed; ${executions} executions for ${calls} calls (re-runs after kills: ${executions - calls}); ${elapsedMs} ms`,
    });
    if (problems.length > 0) {
      const fs = await import("node:fs");
      const ids = problems.map((p) => p.split(":")[0]);
      fs.writeFileSync(
        `/tmp/flk/lwf-dump-${Date.now()}.json`,
        JSON.stringify(
          {
            problems,
            lines: cluster.coordinators.map((c) =>
              c.lines.filter(
                (l) =>
                  ids.some((id) => id && l.includes(id)) ||
                  l.includes('"level":40') ||
                  l.includes('"level":50'),
              ),
            ),
          },
          null,
          1,
        ),
      );
    }
    expect(problems).toEqual([]);
    expect(lost).toBe(0);
    expect(responses).toHaveLength(SESSIONS * TURNS);
    expect(calls).toBe(SESSIONS * TURNS * 2);
  }, 420_000);
});
