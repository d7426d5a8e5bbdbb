import { randomUUID } from "node:crypto";
import { redisSupportsCluster } from "@yiem/testing";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import type { TestCluster } from "../support/cluster.js";
import { recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

/**
 * A Redis Cluster master SIGKILLed while runs are in flight: the one serving the coordinator
 * queue (and a third of the sessions). A replica takes over after the node timeout (2 s);
 * every run must still end with its response. Remote calls may run twice (at-least-once);
 * they are counted and reported, never hidden. The job lock is longer than the failover, as
 * in production (30 s, and a session lease of 10 s, against a node timeout of seconds): the
 * runs in flight keep their jobs and sessions.
 * A lock shorter than the failover is the coordinator-death path, which the other fault tests
 * take.
 */

const RUNS = 12;
const supported = redisSupportsCluster();
if (!supported) {
  console.warn(
    "skipping the Redis Cluster failover: this redis-server has no cluster support (7+)",
  );
}

/** The state of each request job in the coordinator queue, read with plain BullMQ. */
async function requestStates(cluster: TestCluster, runIds: string[]): Promise<string[]> {
  const connection = cluster.connectRedis();
  const queue = new Queue("{coordinator}", { connection, prefix: `${cluster.redis.prefix}:bull` });
  try {
    return await Promise.all(runIds.map((id) => queue.getJobState(id)));
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? "").join("");
}

describe.skipIf(!supported)("faults: a Redis Cluster master dies", () => {
  const { cluster, ledger } = useLedgerCluster({
    workers: 2,
    coordinators: 2,
    redisCluster: true,
    model: { respond: faultModel },
    env: { YIEM_LEASE_MS: "8000", YIEM_LOCK_MS: "12000" },
  });

  it("answers every run when the master of the coordinator queue is SIGKILLed mid-run", async () => {
    const labels = Array.from({ length: RUNS }, (_, i) => `f${i}`);
    const sent = await Promise.all(
      labels.map((label) =>
        cluster.client.send(`ledgerRemote ${label} 1500`, { sessionId: randomUUID() }),
      ),
    );
    await expect
      .poll(async () => (await ledger.entries()).length, { timeout: 15_000 })
      .toBeGreaterThanOrEqual(4);
    const redisCluster = cluster.redisCluster;
    if (!redisCluster) throw new Error("expected a Redis Cluster");
    const killedAt = Date.now();
    await redisCluster.killMaster("SIGKILL", `${cluster.redis.prefix}:bull:{coordinator}:wait`);
    await redisCluster.waitForState("ok");
    const failoverMs = Date.now() - killedAt;

    const responses = await Promise.all(
      sent.map(({ runId }) => cluster.client.waitForResponse(runId, { timeoutMs: 90_000 })),
    );
    const recoveryMs = Date.now() - killedAt;
    expect(responses.map(textOf)).toEqual(labels.map((l) => `final ${l}: ${l}-1 recorded`));
    const counts = await ledger.countsByCall();
    const ranTwice = labels.filter((l) => (counts.get(`${l}-1`) ?? 0) > 1).length;
    expect(labels.every((l) => (counts.get(`${l}-1`) ?? 0) >= 1)).toBe(true);
    await expect
      .poll(
        () =>
          requestStates(
            cluster,
            sent.map((s) => s.runId),
          ),
        { timeout: 30_000 },
      )
      .toEqual(sent.map(() => "completed")); // no request job left behind on Bull Board
    for (const { sessionId } of sent) {
      const results = (await cluster.client.messages(sessionId)).filter(
        (m) => m.role === "toolResult",
      );
      expect(results).toHaveLength(1); // one result per call in every transcript
    }

    const after = await cluster.client.send("ledgerRemote after 10");
    const late = await cluster.client
      .waitForResponse(after.runId, { timeoutMs: 30_000 })
      .catch((err) => {
        for (const c of cluster.coordinators)
          console.log("COORD", c.pid, c.lines.slice(-15).join("\n"));
        throw err;
      });
    expect(textOf(late)).toBe("final after: after-1 recorded");
    console.log(
      `Redis Cluster failover: promoted in ${failoverMs} ms, all ${RUNS} runs answered ${recoveryMs} ms after the kill, ${ranTwice} calls ran twice`,
    );
    await recordFigure({
      scenario: "Redis Cluster master SIGKILLed mid-run (replica promoted)",
      runs: RUNS,
      calls: RUNS,
      lost: 0,
      duplicated: 0,
      recoveryMs,
      note: `the coordinator queue's master; failover ${failoverMs} ms; ${ranTwice} calls ran twice (at-least-once), one result each`,
    });
  }, 180_000);
});
