import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { clusterKeys, connectRedis, type RedisClient } from "@yiem/core";
import { SessionStore } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * An in-process call is marked as running before it runs, so that a coordinator taking the
 * session over reports it interrupted instead of running it again. The mark is fenced by the
 * lease: a holder that lost the session (it stalled through a Redis outage while another
 * coordinator took over and ran the call) is refused and must not run the call. Found by the
 * chaos soak (`npm run chaos`, seed 20261201): a non-idempotent in-process call ran twice.
 */

let server: TestRedis;
let redis: RedisClient;
let store: SessionStore;
const keys = () => clusterKeys(server.prefix);

beforeAll(async () => {
  server = await startTestRedis();
  redis = connectRedis(server.url);
  store = new SessionStore(redis, keys());
});

afterAll(async () => {
  await redis.quit();
  await server.stop();
});

describe("marking an in-process call as running", () => {
  it("marks the call for the lease holder, and refuses a holder whose lease another coordinator took", async () => {
    const sessionId = randomUUID();
    expect(await store.acquire(sessionId, "old-1:a", 100)).toBe(true);
    expect(await store.markRunning(sessionId, "old-1:a", "call-1")).toBe(true);
    await sleep(150); // the old holder stalls past its lease
    expect(await store.acquire(sessionId, "new-2:b", 60_000)).toBe(true);
    expect(await store.loadRunning(sessionId)).toEqual(["call-1"]); // the successor sees it

    expect(await store.markRunning(sessionId, "old-1:a", "call-2")).toBe(false);
    expect(await store.loadRunning(sessionId)).toEqual(["call-1"]); // nothing written
    expect(await redis.pttl(keys().running(sessionId))).toBe(-1); // (expiry is set when the run ends)
    expect(await store.markRunning(sessionId, "new-2:b", "call-2")).toBe(true);
    expect((await store.loadRunning(sessionId)).sort()).toEqual(["call-1", "call-2"]);
  });
});
