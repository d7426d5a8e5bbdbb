/**
 * A tool call that ends while Redis refuses writes (out of memory under `noeviction`), with
 * completed tool jobs removed as they complete (`YIEM_TOOL_JOB_RETENTION_S` 0): the worker's
 * finished marker must land all the same (`recordToolEnd-1.lua` runs with `allow-oom`), since
 * BullMQ's finish, whose first write only deletes, goes through and removes the job. Without
 * the marker, the job is gone with nothing behind it and the call is run again (or answered
 * as lost).
 */
import { describe, expect, it } from "vitest";
import { runOutOfMemory, useLedgerCluster, waitUntil } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

const RUNS = 6;
const TOOL_MS = 800;
const OOM_MS = 2500;

const { cluster, ledger } = useLedgerCluster({
  workers: 1,
  model: { respond: faultModel },
  // Locks and leases outlive the outage (as in redisOutOfMemory): no call is handed out again
  // for a lock that could not be renewed.
  env: { YIEM_LOCK_MS: "15000", YIEM_LEASE_MS: "8000", YIEM_TOOL_JOB_RETENTION_S: "0" },
  redis: { privateServer: true },
});

describe("faults: tool calls that end while Redis is out of memory, retention 0", () => {
  it("keeps each call's result in its finished marker: each answered with it, none run twice", async () => {
    const sends = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        cluster.client.send(`ledgerRemote end${i} ${TOOL_MS} 1`),
      ),
    );
    // Every call runs: memory runs out before any ends, and comes back well after all did.
    await waitUntil(async () => (await ledger.entries()).length >= RUNS, 20_000);
    const refused = await runOutOfMemory(cluster.redis.url, cluster.redis.prefix, OOM_MS);
    const responses = await Promise.all(
      sends.map(({ runId }) => cluster.client.waitForResponse(runId, { timeoutMs: 60_000 })),
    );

    expect(refused).toBe(true);
    // The outage interrupted the runs (their writes refused): each resumed, and read its call's
    // finished marker, its job removed as it completed.
    const interrupted = cluster.coordinators[0]?.lines.filter((l) =>
      l.includes("session interrupted by a Redis error"),
    );
    expect(interrupted?.length).toBeGreaterThan(0);
    expect(responses.map((r) => r.content)).toEqual(
      sends.map((_, i) => [{ type: "text", text: `final end${i}: end${i}-1 recorded` }]),
    );
    const counts = await ledger.countsByCall();
    expect(counts.size).toBe(RUNS);
    expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
  }, 120_000);
});
