import { randomUUID } from "node:crypto";
import { clusterKeys, keyLayoutOf } from "@yiem/core";
import { redisSupportsCluster, type TestProcess } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import type { TestCluster } from "../support/cluster.js";
import { recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

/**
 * A Redis Cluster master SIGKILLed under a tool queue shard: after the failover, every tool
 * worker still takes that shard's calls. A worker whose blocking fetch stayed wedged would
 * look alive (its heartbeat goes on, on another connection) and take nothing, so each worker
 * in turn is the only one running while new calls are sent, and each call must be answered
 * within `ANSWER_BOUND_MS` (a liveness bound, not a speed figure: a call takes 10 ms). The
 * coordinator's wedged fetch lasted past 30 s at times (`coordinatorIntake.ts`); the bound
 * leaves room for one BullMQ drain delay (5 s): a stopped worker's pending blocking fetch
 * takes the queue's wake-up marker, and the worker left running sees the call at its next
 * fetch.
 */

const IN_FLIGHT = 4;
const CALLS_PER_WORKER = 2;
const ANSWER_BOUND_MS = 20_000;
const supported = redisSupportsCluster();
if (!supported) {
  console.warn("skipping the tool-queue failover: this redis-server has no cluster support (7+)");
}

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? "").join("");
}

/** A fresh session id whose tool calls go to shard queue `queue`. */
function sessionOnShard(cluster: TestCluster, queue: string): string {
  const keys = clusterKeys(cluster.redis.prefix, keyLayoutOf(cluster.redisTarget));
  for (;;) {
    const sessionId = randomUUID();
    if (keys.toolQueueFor(undefined, sessionId) === queue) return sessionId;
  }
}

/** Runs `use` while every worker but `alone` is stopped (SIGSTOP), then continues them. */
async function withOnly<T>(
  workers: TestProcess[],
  alone: TestProcess,
  use: () => Promise<T>,
): Promise<T> {
  const others = workers.filter((w) => w !== alone);
  for (const other of others) other.signal("SIGSTOP");
  try {
    return await use();
  } finally {
    for (const other of others) other.signal("SIGCONT");
  }
}

describe.skipIf(!supported)("faults: a Redis Cluster master under a tool queue dies", () => {
  const { cluster } = useLedgerCluster({
    workers: 2,
    coordinators: 1,
    redisCluster: true,
    model: { respond: faultModel },
    env: { YIEM_LEASE_MS: "8000", YIEM_LOCK_MS: "12000" },
  });

  it("has every tool worker take new calls of that queue after the failover", async () => {
    const redisCluster = cluster.redisCluster;
    if (!redisCluster) throw new Error("expected a Redis Cluster");
    const keys = clusterKeys(cluster.redis.prefix, keyLayoutOf(cluster.redisTarget));
    const shard = keys.toolQueues(undefined)[0] as string;
    const inFlight = await Promise.all(
      Array.from({ length: IN_FLIGHT }, (_, i) =>
        cluster.client.send(`ledgerRemote pre${i} 1500`, {
          sessionId: sessionOnShard(cluster, shard),
        }),
      ),
    );
    const killedAt = Date.now();
    await redisCluster.killMaster("SIGKILL", `${keys.bullPrefix}:${shard}:marker`);
    await redisCluster.waitForState("ok");
    const failoverMs = Date.now() - killedAt;
    const early = await Promise.all(
      inFlight.map(({ runId }) => cluster.client.waitForResponse(runId, { timeoutMs: 90_000 })),
    );
    const recoveryMs = Date.now() - killedAt;
    expect(early.map(textOf)).toEqual(inFlight.map((_, i) => `final pre${i}: pre${i}-1 recorded`));

    const answeredMs: number[] = [];
    for (const [w, worker] of cluster.workers.entries()) {
      await withOnly(cluster.workers, worker, async () => {
        for (let c = 0; c < CALLS_PER_WORKER; c++) {
          const label = `w${w}c${c}`;
          const sentAt = Date.now();
          const { runId } = await cluster.client.send(`ledgerRemote ${label} 10`, {
            sessionId: sessionOnShard(cluster, shard),
          });
          const answer = await cluster.client.waitForResponse(runId, {
            timeoutMs: ANSWER_BOUND_MS,
          });
          expect(textOf(answer)).toBe(`final ${label}: ${label}-1 recorded`);
          answeredMs.push(Date.now() - sentAt);
        }
      });
    }
    console.log(
      `tool-queue failover: promoted in ${failoverMs} ms; calls after it answered in ${answeredMs.join(", ")} ms`,
    );
    await recordFigure({
      scenario: "Redis Cluster master of a tool queue shard SIGKILLed",
      runs: IN_FLIGHT + answeredMs.length,
      calls: IN_FLIGHT + answeredMs.length,
      lost: 0,
      duplicated: 0,
      recoveryMs,
      note: `failover ${failoverMs} ms; then each worker alone answered ${CALLS_PER_WORKER} new calls of that shard, slowest in ${Math.max(...answeredMs)} ms`,
    });
  }, 240_000);
});
