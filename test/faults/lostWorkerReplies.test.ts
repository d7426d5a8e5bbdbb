/**
 * A worker's take whose reply Redis lost: Redis ran BullMQ's `moveToActive` (or the take that
 * follows finishing a job), the connection dropped before the reply, and ioredis sent the
 * take again, which took another job or none. The job the first take moved sat active under
 * a token the worker never saw until its lock ran out (30 s) and a stalled check handed it
 * out (30 s more). The worker now hands such a job back at once, its take undone, so a call
 * that is never retried still runs, once. A take that took several jobs (a model turn's
 * parallel calls) hands back every one of them.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useLedgerCluster } from "../support/faults.js";
import { PRODUCTION_JOB_TIMERS, useReplyCuttingProxy } from "../support/replyCuttingProxy.js";

type WireMessage = { role: string; content?: unknown };

/** The sides of the parallel calls of input `t<n>`: one, two or three, by turns. */
const sidesOf = (nth: number) => ["a", "b", "c"].slice(0, ((nth - 1) % 3) + 1);

/** Parallel `ledgerNoRetry` calls labelled after the input (`sidesOf`), then their results joined. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as WireMessage[];
  const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
  if (results.length > 0) return { kind: "text", text: results.join(" | ") };
  const input = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  return {
    kind: "toolCalls",
    calls: sidesOf(Number(input.slice(1))).map((side) => ({
      name: "ledgerNoRetry",
      arguments: { label: `${input}-${side}`, ms: 20 },
    })),
  };
}

const { cluster, ledger } = useLedgerCluster({ coordinators: 1, workers: 0, model: { respond } });
// The production timers: what a job left active by a lost take waited for.
const proxy = useReplyCuttingProxy(cluster, { worker: PRODUCTION_JOB_TIMERS });

describe("a tool worker's take that lost its reply", () => {
  it("hands back at once every job the take took, and each call of a run runs once, whether it took one, two or three", async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (let nth = 1; nth <= 6; nth++) {
      // The worker's first command naming a queue's wait list: the take of the run's calls.
      proxy.cutAt(":wait", 1);
      const cutsBefore = proxy.cuts();
      const input = `t${nth}`;
      const { requestId } = await cluster.client.send(input, { sessionId: randomUUID() });
      const answer = await cluster.client
        .waitForResponse(requestId, { timeoutMs: 10_000 })
        .then((response) => response.content.map((p) => (p.type === "text" ? p.text : "")).join(""))
        .catch((err: Error) => `no answer: ${err.name}`);
      const cut = proxy.cuts() > cutsBefore ? "cut" : "no cut";
      outcomes.push(`${nth} (${cut}): ${answer}`);
      const results = sidesOf(nth).map((side) => `${input}-${side} recorded`);
      expected.push(`${nth} (cut): ${results.join(" | ")}`);
    }
    expect(outcomes).toEqual(expected);
    const runs = (await ledger.entries()).map((entry) => entry.label).sort();
    const labels = [1, 2, 3, 4, 5, 6].flatMap((nth) =>
      sidesOf(nth).map((side) => `t${nth}-${side}`),
    );
    expect(runs).toEqual(labels.sort());
  }, 120_000);
});
