/**
 * Runs waiting at a shared provider limit lend their run slots (issue 33, item 2): a tenant's
 * runs stuck behind a full limit do not keep another tenant's run from starting, so the fair
 * line at the limit can serve it next. Real processes: one coordinator with two run slots, a
 * shared limit of one model request per 4 s, a private Redis.
 */
import { type ScriptedReply, type ScriptedRequest, sampleOf, scrape } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

type Wire = { role: string; content: unknown };

/** The label of each model request, in the order they arrived. */
const received: string[] = [];

/** Answers `done <label>` to the input `<label>` at once, recording the label. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Wire[];
  const label = String(messages.findLast((m) => m.role === "user")?.content ?? "");
  received.push(label);
  return { kind: "text", text: `done ${label}` };
}

/**
 * One request per 4 s (long enough that the waiting runs still wait when the small one comes)
 * for every call made with the key in `OPENAI_API_KEY`, whatever its model.
 */
const LIMITS = { "default-key": { apiKeyEnv: "OPENAI_API_KEY", requests: 1, windowMs: 4000 } };

const cluster = useTestCluster({
  coordinators: 1,
  workers: 0,
  model: { respond },
  coordinatorEnv: { YIEM_COORDINATOR_CONCURRENCY: "2", YIEM_MODEL_LIMITS: JSON.stringify(LIMITS) },
});

/** Runs waiting at the limit, from the coordinator's /metrics. */
async function runsWaitingAtLimit(): Promise<number> {
  const text = await scrape(`${cluster.coordinatorUrls[0]}/metrics`);
  return sampleOf(text, "yiem_runs_waiting_at_limit") ?? -1;
}

describe("run slots lent while a run waits at a shared limit", () => {
  it("starts another tenant's run while a tenant's runs hold every slot waiting at the limit, and serves it first", async () => {
    const { client } = cluster;
    const first = await client.send("big-first", { tenant: "big" });
    await client.waitForResponse(first.requestId, { timeoutMs: 30_000 }); // the window is spent
    const waiting = await Promise.all(
      ["big-1", "big-2", "big-3"].map((label) => client.send(label, { tenant: "big" })),
    );
    // Three waiting runs on two slots: the third started only because the others lent theirs.
    await expect.poll(runsWaitingAtLimit, { timeout: 5000 }).toBe(3);
    const small = await client.send("small", { tenant: "small" });
    // The small tenant's run started too, its call waiting in line with a lent slot.
    await expect.poll(runsWaitingAtLimit, { timeout: 5000 }).toBe(4);
    const answer = await client.waitForResponse(small.requestId, { timeoutMs: 30_000 });
    expect(answer.content).toEqual([{ type: "text", text: "done small" }]);
    // Tenants in turn: the small call, of a tenant with nothing waiting, takes the next request.
    expect(received[0]).toBe("big-first");
    expect(received[1]).toBe("small");
    await Promise.all(
      waiting.map((s) => client.waitForResponse(s.requestId, { timeoutMs: 60_000 })),
    );
    expect(received.slice(1).sort()).toEqual(["big-1", "big-2", "big-3", "small"]); // each once
    expect(await runsWaitingAtLimit()).toBe(0);
  });
});
