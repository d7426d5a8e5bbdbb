import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool")
    return { kind: "text", text: String(messages.at(-1)?.content) };
  return {
    kind: "toolCalls",
    calls: [{ id: "t1", name: "sleepFor", arguments: { ms: 10, label: "over tls" } }],
  };
}

const cluster = useTestCluster({
  workers: 1,
  model: { respond },
  redis: { privateServer: true, tls: true, requirePass: "tls-canary-pass" },
});

describe("rediss:// with a password", () => {
  it("runs a coordinator, a worker and a client over TLS", async () => {
    expect(cluster.env.REDIS_URL).toMatch(/^rediss:\/\/:tls-canary-pass@127\.0\.0\.1:\d+$/);
    const { runId } = await cluster.client.send("go");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "over tls done" }]);
    const logs = [...cluster.coordinators, ...cluster.workers].flatMap((p) => p.lines).join("\n");
    expect(logs).not.toContain("tls-canary-pass");
  });
});
