/**
 * What a completed tool job leaves behind with `YIEM_TOOL_JOB_RETENTION_S` 0 (not the default):
 * the run gets both results, the jobs are gone from their queue (Bull Board lists no completed
 * tool job), and each job's finished marker keeps its result for the hour a resumed run may
 * read it in. (test/cluster/toolJobs.test.ts covers the default, 3600: completed jobs kept,
 * retried and cleaned from the board.)
 */
import { toolJobId, toolQueueName } from "@yiem/core/internal";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

/** Two parallel `sleepFor` calls, then the results joined. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: results.join(" | ") };
  }
  return {
    kind: "toolCalls",
    calls: ["ra", "rb"].map((label) => ({
      id: label,
      name: "sleepFor",
      arguments: { ms: 1, label },
    })),
  };
}

const cluster = useTestCluster({
  workers: 2,
  model: { respond },
  env: { YIEM_TOOL_JOB_RETENTION_S: "0" },
});

describe("tool jobs with a retention of 0", () => {
  it("removes each completed tool job and keeps its result in its finished marker", async () => {
    const { runId, sessionId } = await cluster.client.send("two calls");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 30_000 });
    expect(response.content).toEqual([{ type: "text", text: "ra done | rb done" }]);
    const queue = new Queue(toolQueueName("default"), {
      connection: { url: cluster.redis.url },
      prefix: `${cluster.redis.prefix}:bull`,
    });
    const redis = new Redis(cluster.redis.url);
    try {
      expect(await queue.getJobCounts("completed", "failed", "active", "waiting")).toMatchObject({
        completed: 0,
        failed: 0,
        active: 0,
        waiting: 0,
      });
      for (const call of ["ra", "rb"]) {
        const jobId = toolJobId(sessionId, runId, call);
        expect(await queue.getJob(jobId)).toBeUndefined();
        const marker = `${cluster.redis.prefix}:toolDone:tools-default:${jobId}`;
        const done = JSON.parse((await redis.get(marker)) ?? "null");
        expect(done.result.content).toEqual([{ type: "text", text: `${call} done` }]);
        expect(await redis.ttl(marker)).toBeGreaterThan(3500);
      }
    } finally {
      redis.disconnect();
      await queue.close();
    }
  });
});
