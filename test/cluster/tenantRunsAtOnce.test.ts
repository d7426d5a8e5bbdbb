/**
 * A tenant's cap on its runs at once across the cluster (issue 33, item 2: `runsAtOnce` in
 * `YIEM_TENANTS`), as real processes: two coordinators and a worker, a scripted model whose
 * runs make one slow `sleepFor` call. Runs are followed by their events (`agentStart` to
 * `agentEnd`, by their stored time), read back once answered.
 */
import type { BusEvent } from "@yiem/core";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** `capped` runs at most 2 root runs at once, `solo` 1; other tenants have no cap. */
const TENANTS = { capped: { runsAtOnce: 2 }, solo: { runsAtOnce: 1 } };

/**
 * `<label> <ms>`: one `sleepFor` call of `ms` (none when 0), then the text `done <label>`,
 * for the last user input (an input taken into a running run is answered by it).
 */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const [label = "x", ms = "0"] = String(lastUser?.content ?? "").split(" ");
  const answered = messages.slice(messages.lastIndexOf(lastUser as Wire)).length > 1;
  if (answered || ms === "0") return { kind: "text", text: `done ${label}` };
  const id = `${label}-${Math.random().toString(36).slice(2, 10)}`;
  return {
    kind: "toolCalls",
    calls: [{ id, name: "sleepFor", arguments: { ms: Number(ms), label } }],
  };
}

const cluster = useTestCluster({
  coordinators: 2,
  workers: 1,
  model: { respond },
  coordinatorEnv: { YIEM_TENANTS: JSON.stringify(TENANTS) },
});

/** A root run as its events tell it: when it started and ended, and the requests it answered. */
interface SeenRun {
  start: number;
  end: number;
  inputIds: string[];
}

/** The session's root runs, from its first event to the `agentEnd` answering `requestId`. */
async function runsOf(sessionId: string, requestId: string): Promise<SeenRun[]> {
  const runs: SeenRun[] = [];
  let start = 0;
  const events = cluster.client.events(sessionId, {
    fromStart: true,
    untilAgentEnd: true,
    requestId,
  });
  for await (const event of events) {
    if (event.path) continue; // a child run's, seen at its root
    if (event.type === "agentStart") start = event.ts;
    if (event.type === "agentEnd")
      runs.push({ start, end: event.ts, inputIds: (event as BusEvent).inputIds ?? [] });
  }
  return runs;
}

/** The most runs between their start and end at once (an end and a start at the same ms do not overlap). */
function mostAtOnce(runs: readonly SeenRun[]): number {
  const edges = runs.flatMap((run) => [
    { at: run.start, step: 1 },
    { at: run.end, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const edge of edges) {
    now += edge.step;
    most = Math.max(most, now);
  }
  return most;
}

/** Resolves once the session's run has started a tool call. */
async function toolCallStarted(sessionId: string): Promise<void> {
  for await (const event of cluster.client.events(sessionId, { fromStart: true }))
    if (event.type === "toolExecStart") return;
}

describe("a tenant's runs at once (runsAtOnce)", () => {
  it("runs at most 2 of a capped tenant's 6 runs at once, answers all 6, and holds back no other tenant's run", async () => {
    const { client } = cluster;
    const labels = ["c0", "c1", "c2", "c3", "c4", "c5"];
    const capped = await Promise.all(
      labels.map((label) => client.send(`${label} 800`, { tenant: "capped" })),
    );
    const other = await client.send("other 1500", { tenant: "other" });
    const answers = await Promise.all(
      capped.map((sent) => client.waitForResponse(sent.requestId, { timeoutMs: 60_000 })),
    );
    expect(answers.map((answer) => answer.content)).toEqual(
      labels.map((label) => [{ type: "text", text: `done ${label}` }]),
    );
    await client.waitForResponse(other.requestId, { timeoutMs: 60_000 });

    const cappedRuns = (
      await Promise.all(capped.map((sent) => runsOf(sent.sessionId, sent.requestId)))
    ).flat();
    const [otherRun] = await runsOf(other.sessionId, other.requestId);
    expect(cappedRuns).toHaveLength(6);
    expect(mostAtOnce(cappedRuns)).toBe(2); // 6 without the cap
    // The other tenant's run started at once, beside the capped tenant's two.
    expect(mostAtOnce([...cappedRuns, otherRun as SeenRun])).toBe(3);
    expect(otherRun?.start).toBeLessThan(Math.max(...cappedRuns.map((run) => run.start)));
  });

  it("takes an input to a running session into its run and runs a follow-up after it, while the tenant's next run waits", async () => {
    const { client } = cluster;
    const first = await client.send("first 2000", { tenant: "solo" });
    await toolCallStarted(first.sessionId);
    const next = await client.send("next 0", { tenant: "solo" }); // solo's one place is taken
    // Neither names its tenant: the session's is solo's.
    const joined = await client.send("joined 0", { sessionId: first.sessionId });
    const followUp = await client.send("followUp 0", {
      sessionId: first.sessionId,
      followUp: true,
    });
    for (const sent of [first, next, joined, followUp])
      await client.waitForResponse(sent.requestId, { timeoutMs: 60_000 });

    const [run, afterIt] = await runsOf(first.sessionId, followUp.requestId);
    expect(run?.inputIds).toEqual([first.requestId, joined.requestId]);
    expect(afterIt?.inputIds).toEqual([followUp.requestId]);
    const [nextRun] = await runsOf(next.sessionId, next.requestId);
    // The follow-up ran in the session's place, ahead of the tenant's next run.
    expect(nextRun?.start).toBeGreaterThanOrEqual(afterIt?.end ?? Number.POSITIVE_INFINITY);
  });
});
