import { randomUUID } from "node:crypto";
import { clusterKeys } from "@yiem/core";
import { type ChildCallRequest, ChildRunStore, SessionStore } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import { useRedisConnection } from "../support/redisConnection.js";

/**
 * A parent's call of another agent is recorded (the request), then its child is listed in the
 * parent's tree. A coordinator that dies between the two leaves the request without its
 * listing; the batch resumed by the next holder records the call again and must list it then.
 * (Found by the chaos soak: "answered without a child run", and a tree without expiry.)
 */

const t = useRedisConnection();
const keys = () => clusterKeys(t.server.prefix);

function childCall(callKey: string): ChildCallRequest {
  return {
    callKey,
    toolCallId: `call_${callKey}`,
    toolName: "agent__helper",
    arguments: { input: "help" },
    reason: "agent call",
    runId: "r1",
    requestedAt: Date.now(),
    child: { agent: "helper", sessionId: `helper-${randomUUID()}` },
  };
}

/** A new session held with lease `token`, and the stores of its transcript and tree. */
async function heldSession(token: string) {
  const sessionId = randomUUID();
  const store = new SessionStore(t.redis, keys());
  const children = new ChildRunStore(t.redis, keys());
  expect(await store.acquire(sessionId, token, 60_000)).toBe(true);
  return { sessionId, store, children };
}

describe("a parent's tree of child runs", () => {
  it("lists the child again when a resumed batch records the call its dead holder recorded", async () => {
    const { sessionId, store, children } = await heldSession("first");
    const first = await children.request(sessionId, "first", childCall("k1"));
    expect(first).not.toBe("lost");
    // The first holder died between recording the request and listing its child.
    await t.redis.del(keys().children(sessionId));
    await store.release(sessionId, "first");
    expect(await store.acquire(sessionId, "next", 60_000)).toBe(true);
    const resumed = await children.request(sessionId, "next", childCall("k1"));
    expect(resumed).toEqual(first); // the first request, with its child session
    const listed = await children.children(sessionId);
    expect(listed.map((c) => [c.callKey, c.sessionId, c.status])).toEqual([
      ["k1", (first as ChildCallRequest).child.sessionId, "running"],
    ]);
    expect(await t.redis.ttl(keys().children(sessionId))).toBeGreaterThan(0);
  });

  it("lists a child once, with the tree's expiry, however often its call is recorded", async () => {
    const { sessionId, children } = await heldSession("holder");
    const recorded = await children.request(sessionId, "holder", childCall("k2"));
    await children.request(sessionId, "holder", childCall("k2"));
    const listed = await children.children(sessionId);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.sessionId).toBe((recorded as ChildCallRequest).child.sessionId);
    expect(await t.redis.ttl(keys().children(sessionId))).toBeGreaterThan(0);
  });
});
