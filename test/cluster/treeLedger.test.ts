/**
 * The ledger a tree of agents spends from (issue 34, finding 4), on a real Redis: siblings
 * reserving at once never take more model calls than the root's budget, a child's start
 * prepays its first model call, and a node that reports its running totals again (a run
 * resumed on another coordinator) never counts them twice.
 */
import { randomUUID } from "node:crypto";
import { clusterKeys, type RunUsage } from "@yiem/core";
import { TreeLedger } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import { useRedisConnection } from "../support/redisConnection.js";

const t = useRedisConnection();

/** A node's usage so far, as a run reports it. */
function usage(fields: Partial<RunUsage> = {}): RunUsage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    modelCalls: 0,
    toolCalls: 0,
    ...fields,
  } as RunUsage;
}

/** A fresh tree: its ledger, its root and a node id maker. */
function tree() {
  const ledger = new TreeLedger(t.redis, clusterKeys(t.server.prefix));
  const root = { sessionId: `root-${randomUUID()}`, runId: "r1" };
  return { ledger, root };
}

describe("a tree's ledger", () => {
  it("lets 12 siblings reserving at once take exactly the root's 5 model calls", async () => {
    const { ledger, root } = tree();
    await ledger.request(root, root, "report", usage(), { limits: { maxModelCalls: 5 } });
    const siblings = Array.from({ length: 12 }, (_, i) => ({
      sessionId: `child-${i}`,
      runId: "c",
    }));
    const replies = await Promise.all(
      siblings.map((node) => ledger.request(root, node, "modelCall", usage())),
    );
    expect(replies.filter((reply) => reply === undefined)).toHaveLength(5);
    expect(replies.find((reply) => reply !== undefined)).toMatch(
      /^maxModelCalls \(5 model calls for the tree of agents; the tree used 5\)$/,
    );
  });

  it("counts a child's start as its first model call, which the child then spends", async () => {
    const { ledger, root } = tree();
    const limits = { maxModelCalls: 2 };
    const child = { sessionId: `child-${randomUUID()}`, runId: "c" };
    expect(await ledger.request(root, root, "modelCall", usage(), { limits })).toBeUndefined();
    const start = { childSessionId: child.sessionId };
    expect(await ledger.request(root, root, "childRun", usage(), start)).toBeUndefined();
    expect(await ledger.request(root, root, "childRun", usage(), start)).toMatch(/maxModelCalls/);
    expect(await ledger.request(root, child, "modelCall", usage())).toBeUndefined(); // prepaid
    expect(await ledger.request(root, child, "modelCall", usage())).toMatch(/maxModelCalls/);
  });

  it("never counts a node's report twice: a resumed run reports the same totals again", async () => {
    const { ledger, root } = tree();
    const limits = { maxTokens: 150 };
    const node = { sessionId: `child-${randomUUID()}`, runId: "c" };
    await ledger.request(root, root, "report", usage(), { limits });
    const spent = usage({ totalTokens: 100 });
    expect(await ledger.request(root, node, "modelCall", spent)).toBeUndefined();
    expect(await ledger.request(root, node, "modelCall", spent)).toBeUndefined(); // 100, not 200
    expect(await ledger.request(root, node, "modelCall", usage({ totalTokens: 160 }))).toMatch(
      /^maxTokens \(150 tokens for the tree of agents; the tree used 160\)$/,
    );
  });
});
