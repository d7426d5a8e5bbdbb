/**
 * A worker's take whose reply Redis lost: Redis ran BullMQ's `moveToActive` (or the take that
 * follows finishing a job), the connection dropped before the reply, and ioredis sent the
 * take again, which took another job or none. The job the first take moved sat active under
 * a token the worker never saw until its lock ran out (30 s) and a stalled check handed it
 * out (30 s more). The worker now hands such a job back at once, its take undone, so a call
 * that is never retried still runs, once.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useLedgerCluster } from "../support/faults.js";
import { PRODUCTION_JOB_TIMERS, useReplyCuttingProxy } from "../support/replyCuttingProxy.js";

type WireMessage = { role: string; content?: unknown };

/** Two parallel `ledgerNoRetry` calls labelled after the input, then their results joined. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as WireMessage[];
  const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
  if (results.length > 0) return { kind: "text", text: results.join(" | ") };
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  return {
    kind: "toolCalls",
    calls: ["a", "b"].map((side) => ({
      name: "ledgerNoRetry",
      arguments: { label: `${input}-${side}`, ms: 20 },
    })),
  };
}

const { cluster, ledger } = useLedgerCluster({ coordinators: 1, workers: 0, model: { respond } });
// The production timers: what a job left active by a lost take waited for.
const proxy = useReplyCuttingProxy(cluster, { worker: PRODUCTION_JOB_TIMERS });

describe("a tool worker's take that lost its reply", () => {
  it("hands the job back at once, and each call of a run runs once, whichever take lost its reply", async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (let nth = 1; nth <= 6; nth++) {
      // The worker's commands naming a queue's wait list: its takes (and its finishes, which take the next job).
      proxy.cutAt(":wait", nth);
      const cutsBefore = proxy.cuts();
      const input = `t${nth}`;
      const { requestId } = await cluster.client.send(input, { sessionId: randomUUID() });
      const answer = await cluster.client
        .waitForResponse(requestId, { timeoutMs: 10_000 })
        .then((response) => response.content.map((p) => (p.type === "text" ? p.text : "")).join(""))
        .catch((err: Error) => `no answer: ${err.name}`);
      const cut = proxy.cuts() > cutsBefore ? "cut" : "no cut";
      outcomes.push(`${nth} (${cut}): ${answer}`);
      expected.push(`${nth} (${cut}): ${input}-a recorded | ${input}-b recorded`);
    }
    expect(outcomes).toEqual(expected);
    expect(outcomes.filter((o) => o.includes("(cut)")).length).toBeGreaterThanOrEqual(3);
    const runs = (await ledger.entries()).map((entry) => entry.label).sort();
    expect(runs).toEqual([1, 2, 3, 4, 5, 6].flatMap((nth) => [`t${nth}-a`, `t${nth}-b`]).sort());
  }, 120_000);
});
