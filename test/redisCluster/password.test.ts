import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";
import { redisSupportsCluster } from "../support/redisCluster.js";
import type { ScriptedReply, ScriptedRequest } from "../support/scriptedModelServer.js";

const PASSWORD = "cluster-canary-pass-7d1";

/** `parallel` → two sleepFor calls; then the results joined. */
function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool") {
    const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    return { kind: "text", text: results.join(" | ") };
  }
  const calls = ["one", "two"].map((label) => ({
    id: label,
    name: "sleepFor",
    arguments: { ms: 50, label },
  }));
  return { kind: "toolCalls", calls };
}

describe.skipIf(!redisSupportsCluster())("a Redis Cluster with a password on every node", () => {
  const cluster = useTestCluster({
    workers: 2,
    redisCluster: { requirePass: PASSWORD },
    model: { respond },
  });

  it("runs every process from REDIS_CLUSTER_NODES URLs that carry the password", async () => {
    const [first = ""] = cluster.redisCluster?.nodes ?? [];
    expect(first).toContain(`:${PASSWORD}@`);
    const anonymous = new Redis(first.replace(`:${PASSWORD}@`, ""), {
      lazyConnect: true,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
    });
    anonymous.on("error", () => undefined);
    await expect(anonymous.connect().then(() => anonymous.get("x"))).rejects.toThrow(/NOAUTH/);
    anonymous.disconnect();

    const { runId } = await cluster.client.send("parallel");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "one done | two done" }]);
  });
});
