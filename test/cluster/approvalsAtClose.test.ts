/**
 * A run that decided calls forgets its approvals before it closes, even when its holder died
 * between appending the decided batch (and the model's answer) and forgetting them: the
 * coordinator that resumes it finds the answer in the transcript and closes the run, and no
 * approvals, decisions or stored outcomes outlive it (they have no expiry of their own).
 * Found by the chaos soak (`npm run chaos`, seed 20261201).
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage, UserMessage } from "@yiem/core";
import { clusterKeys } from "@yiem/core";
import { ApprovalStore, SessionStore } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const cluster = useTestCluster({
  coordinators: 0,
  workers: 0,
  model: { respond: () => ({ kind: "text", text: "the model is not asked again" }) },
});

const now = Date.now();
const callBlock = {
  type: "toolCall" as const,
  id: "a1",
  name: "ledgerApproval",
  arguments: { label: "a1" },
};
const afterTheDecision: AgentMessage[] = [
  {
    role: "assistant",
    content: [callBlock],
    stopReason: "toolUse",
    timestamp: now,
  } as AgentMessage,
  {
    role: "toolResult",
    toolCallId: "a1",
    toolName: "ledgerApproval",
    content: [{ type: "text", text: "a1 recorded" }],
    isError: false,
    timestamp: now,
  } as AgentMessage,
  {
    role: "assistant",
    content: [{ type: "text", text: "answered" }],
    stopReason: "stop",
    timestamp: now,
  } as AgentMessage,
];

describe("approvals when a resumed run closes", () => {
  it("are forgotten when the dead holder had appended the decided batch and the answer", async () => {
    const redis = cluster.connectRedis();
    try {
      const keys = clusterKeys(cluster.redis.prefix);
      const sessions = new SessionStore(redis, keys);
      const approvals = new ApprovalStore(redis, keys);
      const sessionId = randomUUID();
      // The request job, and what its dead holder left in the session.
      const { runId } = await cluster.client.send("go", { sessionId });
      const input: UserMessage = {
        role: "user",
        content: [{ type: "text", text: "go" }],
        timestamp: now,
      };
      await sessions.enqueueInput(sessionId, runId, "input", input, now * 1024);
      const token = "dead-1:holder";
      expect(await sessions.acquire(sessionId, token, 60_000)).toBe(true);
      expect((await sessions.startRun(sessionId, token)).kind).toBe("new");
      const request = {
        callKey: "a1",
        toolCallId: "a1",
        toolName: "ledgerApproval",
        arguments: { label: "a1" },
        reason: "always",
        runId,
        requestedAt: now,
      };
      expect(await approvals.request(sessionId, token, request)).toBe("new");
      await approvals.decide(sessionId, "a1", { approved: true, decidedAt: now });
      expect(await sessions.appendMany(sessionId, token, afterTheDecision)).toBe(true);
      await sessions.release(sessionId, token); // its lease lapsed

      await cluster.addCoordinator();
      const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
      expect(response.content).toEqual([{ type: "text", text: "answered" }]);
      expect(
        await redis.exists(
          keys.approvals(sessionId),
          keys.decisions(sessionId),
          keys.parkedResults(sessionId),
        ),
      ).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
