import { randomUUID } from "node:crypto";
import { RedisUnavailableError, YiemClient } from "@yiem/core";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { recordFigure, useLedgerCluster } from "../support/faults.js";
import { faultModel } from "./scriptedFaultModel.js";

const { cluster, ledger } = useLedgerCluster({
  workers: 2,
  model: { respond: faultModel },
  env: { YIEM_LEASE_MS: "8000", YIEM_LOCK_MS: "8000" },
  redis: { privateServer: true, appendOnly: true },
});

describe("faults: Redis restarts mid-run (AOF on)", () => {
  it("reconnects every process and completes the run; a send while Redis is down fails fast and writes nothing", async () => {
    const sessionId = randomUUID();
    const running = (async () => {
      for await (const event of cluster.client.events(sessionId, { fromStart: true })) {
        if (event.type === "toolExecUpdate") return;
      }
    })();
    const { runId } = await cluster.client.send("ledgerRemote rr 2500 2", { sessionId });
    await running;
    await cluster.redis.kill("SIGTERM");
    const downAt = Date.now();

    const offline = new YiemClient({ redis: cluster.redis.url, prefix: cluster.redis.prefix });
    const lostSession = randomUUID();
    await expect(offline.send("while down", { sessionId: lostSession })).rejects.toBeInstanceOf(
      RedisUnavailableError,
    );
    const failFastMs = Date.now() - downAt;
    await offline.close();

    await new Promise((resolve) => setTimeout(resolve, 1500));
    await cluster.redis.restart();
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 60_000 });
    const recoveryMs = Date.now() - downAt;
    expect(response.content).toEqual([
      { type: "text", text: "final rr: rr-1 recorded | rr-2 recorded" },
    ]);

    const redis = new Redis(cluster.redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue("coordinator", {
      connection: redis,
      prefix: `${cluster.redis.prefix}:bull`,
    });
    const jobs = await queue.getJobs(["waiting", "active", "completed", "failed", "delayed"]);
    await queue.close();
    redis.disconnect();
    expect(jobs.filter((job) => job.data?.sessionId === lostSession)).toEqual([]);
    const counts = await ledger.countsByCall();
    await recordFigure({
      scenario: "Redis restarted mid-run (AOF)",
      runs: 1,
      calls: 2,
      lost: 0,
      duplicated: 0,
      recoveryMs,
      note: `send while down failed after ${failFastMs} ms; executions per call: ${[counts.get("rr-1"), counts.get("rr-2")].join(", ")}`,
    });
  });
});
