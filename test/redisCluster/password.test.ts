import { redisSupportsCluster, type ScriptedReply, type ScriptedRequest } from "@yiem/testing";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const PASSWORD = "cluster-canary-pass-7d1";
const USER_PASSWORD = "cluster-user-pass-3e9";

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

/** Every node's URL with `yiem:<password>@` (an ACL user) instead of the default user's password. */
function asAclUser(nodes: string[]): string {
  return nodes.map((url) => url.replace(`:${PASSWORD}@`, `yiem:${USER_PASSWORD}@`)).join(",");
}

describe.skipIf(!redisSupportsCluster())("a Redis Cluster with a password on every node", () => {
  const cluster = useTestCluster({
    workers: 2,
    redisCluster: {
      requirePass: PASSWORD,
      aclUsers: [["yiem", "on", `>${USER_PASSWORD}`, "~*", "&*", "+@all"]],
    },
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

  it("runs a coordinator and a worker as an ACL user named in the URLs", async () => {
    const nodes = asAclUser(cluster.redisCluster?.nodes ?? []);
    expect(nodes).toContain(`yiem:${USER_PASSWORD}@127.0.0.1:`);
    await cluster.addCoordinatorWith({ REDIS_CLUSTER_NODES: nodes });
    await cluster.addWorkerWith({ REDIS_CLUSTER_NODES: nodes });
    for (const old of [cluster.coordinators[0], ...cluster.workers.slice(0, 2)]) {
      old?.signal("SIGTERM");
      await old?.exited;
    }
    const { runId } = await cluster.client.send("parallel");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "one done | two done" }]);
  }, 60_000);
});
