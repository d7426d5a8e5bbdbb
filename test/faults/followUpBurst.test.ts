/**
 * A burst of follow-ups to one busy session, added with plain bullmq: the Redis work per
 * follow-up must not grow with the burst, and other sessions must not wait behind it.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { recordFigure } from "../support/faults.js";
import { usePlainCoordinatorQueue } from "../support/plainCoordinatorQueue.js";

/** Answers at once with the number of user messages it was sent (the session's length). */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string }>;
  return { kind: "text", text: `ok ${messages.filter((m) => m.role === "user").length}` };
}

const cluster = useTestCluster({
  workers: 1,
  model: { respond },
  redis: { privateServer: true },
});

const plain = usePlainCoordinatorQueue(cluster);

async function commandsProcessed(): Promise<number> {
  const info = await plain.connection.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** Resolves once every job of `ids` has completed; `count()` tells how many have so far. */
function whenAllComplete(ids: string[]) {
  const open = new Set(ids);
  let resolve: () => void = () => undefined;
  const all = new Promise<void>((done) => {
    resolve = done;
  });
  const onCompleted = ({ jobId }: { jobId: string }) => {
    if (open.delete(jobId) && open.size === 0) {
      plain.events.off("completed", onCompleted);
      resolve();
    }
  };
  plain.events.on("completed", onCompleted);
  return { all, count: () => ids.length - open.size };
}

/** Sends `size` follow-ups to a fresh session at once; returns Redis commands per follow-up. */
async function burst(size: number, during?: (finished: () => number) => Promise<void>) {
  const sessionId = `burst-${randomUUID()}`;
  const ids = Array.from({ length: size }, (_, i) => `${sessionId}-${i + 1}`);
  const completed = whenAllComplete(ids);
  const before = await commandsProcessed();
  await plain.queue.addBulk(
    ids.map((jobId, i) => ({
      name: "follow-up",
      data: { sessionId, input: `follow-up ${i + 1}`, followUp: true },
      opts: { jobId },
    })),
  );
  const probe = during?.(completed.count);
  await completed.all;
  await probe;
  const after = await commandsProcessed();
  return { perFollowUp: (after - before) / size, answered: completed.count(), sessionId };
}

describe("faults: a burst of follow-ups to one busy session", () => {
  it("costs the same Redis work per follow-up in a burst of 2,000 as of 200, and another session is answered during it", async () => {
    const small = await burst(200);
    let otherMs = Number.NaN;
    let finishedWhenAnswered = Number.NaN;
    const large = await burst(2000, async (finished) => {
      while (finished() < 500) await new Promise((resolve) => setTimeout(resolve, 20));
      const started = Date.now();
      const job = await plain.queue.add("other", { input: "unrelated question" });
      await job.waitUntilFinished(plain.events, 60_000);
      otherMs = Date.now() - started;
      finishedWhenAnswered = finished();
    });
    expect(small.answered).toBe(200);
    expect(large.answered).toBe(2000);
    // The other session did not wait for the burst to drain.
    expect(finishedWhenAnswered).toBeLessThan(2000);
    const ratio = large.perFollowUp / small.perFollowUp;
    expect(ratio).toBeLessThanOrEqual(1.5);
    const transcript = await cluster.client.messages(large.sessionId);
    const users = transcript.filter((m) => m.role === "user");
    expect(users).toHaveLength(2000);
    await recordFigure({
      scenario: "2,000 follow-ups to one busy session",
      runs: 2200,
      calls: 0,
      lost: 0,
      duplicated: 0,
      note: `Redis commands per follow-up: ${small.perFollowUp.toFixed(0)} (burst of 200), ${large.perFollowUp.toFixed(0)} (burst of 2,000), ratio ${ratio.toFixed(2)}; another session answered in ${otherMs} ms mid-burst`,
    });
  }, 240_000);
});
