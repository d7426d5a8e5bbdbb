/**
 * Redis refuses writes for a few seconds (maxmemory reached under noeviction) while runs are
 * in flight: no run may be left open with nothing behind it, no process is taken for dead
 * because its heartbeats were refused (for twice a life's ttl), and no tool may run twice.
 */
import { describe, expect, it } from "vitest";
import { recordFigure, runOutOfMemory, useLedgerCluster, waitUntil } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

const RUNS = 20;
const OOM_MS = 3000;

const { cluster, ledger } = useLedgerCluster({
  workers: 2,
  model: { respond: faultModel },
  // Locks outlive the outage: a lock that cannot be renewed for longer would (rightly)
  // hand the call to another worker, which is a different scenario (workerFaults).
  env: { YIEM_LOCK_MS: "15000", YIEM_LEASE_MS: "8000" },
  redis: { privateServer: true },
});

describe("faults: Redis out of memory (noeviction) mid-run", () => {
  it("answers every run once memory is back, without a new send, and runs no tool twice", async () => {
    const sends = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => cluster.client.send(`ledgerRemote oom${i} 1200 1`)),
    );
    await waitUntil(async () => (await ledger.entries()).length >= RUNS, 20_000);
    const refused = await runOutOfMemory(cluster.redis.url, cluster.redis.prefix, OOM_MS);
    const backAt = Date.now();
    const responses = await Promise.all(
      sends.map(({ runId }) => cluster.client.waitForResponse(runId, { timeoutMs: 60_000 })),
    );
    const recoveryMs = Date.now() - backAt;

    expect(refused).toBe(true);
    // The outage hit the coordinator while it stored results: it kept the runs and retried.
    const retried = cluster.coordinators[0]?.lines.filter((l) =>
      l.includes("Redis error; retrying"),
    );
    expect(retried?.length).toBeGreaterThan(0);
    expect(responses.map((r) => r.content)).toEqual(
      sends.map((_, i) => [{ type: "text", text: `final oom${i}: oom${i}-1 recorded` }]),
    );
    // Every beat was refused for longer than a life's ttl: the workers were not taken for dead
    // (their running calls handed to the other worker would have run twice).
    const coordinatorLines = cluster.coordinators[0]?.lines ?? [];
    expect(coordinatorLines.filter((l) => l.includes("processes found dead"))).toEqual([]);
    const counts = await ledger.countsByCall();
    expect(counts.size).toBe(RUNS);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    await recordFigure({
      scenario: `Redis out of memory for ${OOM_MS / 1000} s with ${RUNS} runs in flight`,
      runs: RUNS,
      calls: RUNS,
      lost: 0,
      duplicated: [...counts.values()].filter((n) => n > 1).length,
      recoveryMs,
      note: "writes refused (maxmemory 1, noeviction) while every call ran; all answered after, no new send",
    });
  }, 120_000);
});
