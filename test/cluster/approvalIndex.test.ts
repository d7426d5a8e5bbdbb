/**
 * The cluster-wide index of calls awaiting approval (`approvalsPending`) holds only calls that
 * may still wait: once a batch's results are in the transcript and its approvals are
 * forgotten, its calls leave the index too, decided or not. Found by the chaos soak (`npm run
 * chaos`, seed 20261201): an entry whose call no longer waited stayed in the index for good
 * (readers skip such entries, but only calls with a deadline were ever swept). And a tree's
 * index never keeps a call alone: a holder woken past its lease, or a decision that came
 * between a request's record and its tree's entry, left one there for good (seed of a CI run).
 */
import { randomUUID } from "node:crypto";
import { clusterKeys, connectRedis, type RedisClient } from "@yiem/core";
import { ApprovalStore, SessionStore } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: TestRedis;
let redis: RedisClient;

beforeAll(async () => {
  server = await startTestRedis();
  redis = connectRedis(server.url);
});

afterAll(async () => {
  await redis.quit();
  await server.stop();
});

function request(callKey: string, deadline?: number) {
  return {
    callKey,
    toolCallId: callKey,
    toolName: "ledgerApproval",
    arguments: { label: callKey },
    reason: "always",
    runId: "run-1",
    requestedAt: Date.now(),
    ...(deadline ? { deadline } : {}),
  };
}

/** The keys, stores and a fresh session id of one scenario, on the file's Redis. */
function scenario() {
  const keys = clusterKeys(server.prefix);
  return {
    keys,
    sessions: new SessionStore(redis, keys),
    approvals: new ApprovalStore(redis, keys),
    sessionId: randomUUID(),
  };
}

describe("the approval index", () => {
  it("drops the calls of a batch whose approvals its holder forgets, decided or not; a coordinator without the lease forgets nothing", async () => {
    const { keys, sessions, approvals, sessionId } = scenario();
    expect(await sessions.acquire(sessionId, "c-1:a", 60_000)).toBe(true);
    expect(await approvals.request(sessionId, "c-1:a", request("a1"))).toBe("new");
    expect(await approvals.request(sessionId, "c-1:a", request("a2", Date.now() + 60_000))).toBe(
      "new",
    );
    await approvals.decide(sessionId, "a1", { approved: true, decidedAt: Date.now() });
    expect(await redis.zrange(keys.approvalsPending, 0, -1)).toEqual([`${sessionId} a2`]);

    expect(await approvals.clear(sessionId, "c-2:b")).toBe(false); // not the holder: nothing forgotten
    expect(await redis.exists(keys.approvals(sessionId))).toBe(1);
    expect(await approvals.clear(sessionId, "c-1:a")).toBe(true); // a2 was answered without a decision (its run aborted)
    expect(await redis.zrange(keys.approvalsPending, 0, -1)).toEqual([]);
    expect(await redis.zrange(keys.approvalDeadlines, 0, -1)).toEqual([]);
    expect(await redis.exists(keys.approvals(sessionId), keys.decisions(sessionId))).toBe(0);
  });

  it("drops an entry a coordinator woken past its lease wrote for a call it could not record, from its tree's index too, and keeps waiting calls", async () => {
    const { keys, sessions, approvals, sessionId } = scenario();
    expect(await sessions.acquire(sessionId, "c-1:a", 60_000)).toBe(true);
    expect(await approvals.request(sessionId, "c-1:a", request("waits"))).toBe("new");
    // The stale holder: its index entry lands, its fenced request does not.
    expect(await approvals.request(sessionId, "c-9:stale", request("never"))).toBe("lost");
    const members = () => redis.zrange(keys.approvalsPending, 0, -1);
    expect((await members()).sort()).toEqual([`${sessionId} never`, `${sessionId} waits`].sort());

    const swept = await approvals.dropOrphanEntries(0, Date.now() + 1000);
    expect(swept.dropped).toBe(1);
    expect(swept.next).toBe(0); // the whole index fit in the page
    expect(await members()).toEqual([`${sessionId} waits`]);
    // Its tree's index (the session is a root) loses it too: no orphan left there for good.
    expect(await redis.zrange(keys.treeApprovals(sessionId), 0, -1)).toEqual([
      `${sessionId} waits`,
    ]);
    // An entry younger than the sweep's bound is left alone (its request may be on its way).
    await approvals.request(sessionId, "c-9:stale", request("young"));
    expect((await approvals.dropOrphanEntries(0, Date.now() - 60_000)).dropped).toBe(0);
    expect(await members()).toContain(`${sessionId} young`);
  });

  it("keeps a call in the cluster-wide index when its removal stops short of it, so the sweep drops it from its tree's index too", async () => {
    const { keys, sessions, approvals, sessionId } = scenario();
    const member = `${sessionId} cut`;
    const tree = keys.treeApprovals(sessionId);
    expect(await sessions.acquire(sessionId, "c-1:a", 60_000)).toBe(true);
    expect(await approvals.request(sessionId, "c-1:a", request("cut"))).toBe("new");
    // The removal stops at the tree's index (as a process killed there would): a key of
    // another type refuses the ZREM, and nothing after it may run.
    await redis.rename(tree, `${tree}:aside`);
    await redis.set(tree, "not a sorted set");
    await expect(approvals.clear(sessionId, "c-1:a")).rejects.toThrow(/WRONGTYPE/);
    expect(await redis.zrange(keys.approvalsPending, 0, -1)).toContain(member);
    // The process comes back (the tree's index as it was): the sweep finds the orphan.
    await redis.rename(`${tree}:aside`, tree);
    const swept = await approvals.dropOrphanEntries(0, Date.now() + 1000);
    expect(swept.dropped).toBeGreaterThanOrEqual(1);
    expect(await redis.zrange(keys.approvalsPending, 0, -1)).not.toContain(member);
    expect(await redis.exists(tree)).toBe(0);
  });

  it("leaves nothing in its tree's index when a holder woken past its lease requests a call that was decided and forgotten meanwhile", async () => {
    const { keys, sessions, approvals: holder, sessionId } = scenario();
    expect(await sessions.acquire(sessionId, "c-1:new", 60_000)).toBe(true);
    expect(await holder.request(sessionId, "c-1:new", request("x"))).toBe("new");
    // The stale holder stops right after its cluster-wide index write (SIGSTOP, a long GC);
    // meanwhile the new holder's call is decided and its batch forgotten.
    const stale = new ApprovalStore(
      pausedAfter(redis, "zadd", async () => {
        await holder.decide(sessionId, "x", { approved: true, decidedAt: Date.now() });
        expect(await holder.clear(sessionId, "c-1:new")).toBe(true);
      }),
      keys,
    );
    expect(await stale.request(sessionId, "c-9:stale", request("x"))).toBe("lost");
    expect(await redis.zrange(keys.treeApprovals(sessionId), 0, -1)).toEqual([]);
    await stale.dropOrphanEntries(0, Date.now() + 1000);
    expect(await redis.zrange(keys.approvalsPending, 0, -1)).not.toContain(`${sessionId} x`);
  });

  it("takes a call back out of its tree's index when it was decided between its record and that write", async () => {
    const { keys, sessions, approvals: deciding, sessionId } = scenario();
    expect(await sessions.acquire(sessionId, "c-1:a", 60_000)).toBe(true);
    // The holder stops right after its request is recorded; the call is decided meanwhile.
    const holder = new ApprovalStore(
      pausedAfter(redis, "yiemRequestApproval", async () => {
        await deciding.decide(sessionId, "y", { approved: false, decidedAt: Date.now() });
      }),
      keys,
    );
    expect(await holder.request(sessionId, "c-1:a", request("y"))).toBe("new");
    expect(await redis.zrange(keys.treeApprovals(sessionId), 0, -1)).toEqual([]);
    expect(await redis.zrange(keys.approvalsPending, 0, -1)).not.toContain(`${sessionId} y`);
  });
});

/**
 * `redis`, whose first `command` runs `meanwhile` once its reply is in and before it returns:
 * the process that sent it stopped there while others went on. The same connection, the same
 * Redis; only the order in time is forced.
 */
function pausedAfter(
  redis: RedisClient,
  command: string,
  meanwhile: () => Promise<void>,
): RedisClient {
  let paused = false;
  return new Proxy(redis, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      if (name !== command) return value.bind(target);
      return async (...args: unknown[]) => {
        const reply = await value.apply(target, args);
        if (!paused) {
          paused = true;
          await meanwhile();
        }
        return reply;
      };
    },
  });
}
