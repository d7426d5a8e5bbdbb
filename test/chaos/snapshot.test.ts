/**
 * The soak's snapshot reads what the checker needs from a real Redis: the members of both
 * approval indexes, so young orphans a sweep will drop are told apart from entries left for
 * good in the cluster-wide index and in a tree's alike.
 */
import { clusterKeys, connectRedis } from "@yiem/core";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkKeys } from "../../chaos/check/keys.js";
import { readSnapshot } from "../../chaos/check/snapshot.js";

let server: TestRedis;

beforeAll(async () => {
  server = await startTestRedis();
});

afterAll(async () => {
  await server.stop();
});

describe("the soak's snapshot", () => {
  it("reads the members of a tree's approval index, so its young orphans are a note, not a violation", async () => {
    const redis = connectRedis(server.url);
    const keys = clusterKeys(server.prefix);
    const member = "chaos-1\nr1.0.0";
    await redis.zadd(keys.approvalsPending, Date.now() - 2_000, member);
    await redis.zadd(keys.treeApprovals("chaos-1"), Date.now() - 2_000, member);
    await redis.expire(keys.treeApprovals("chaos-1"), 3600);
    await redis.quit();
    const snapshot = await readSnapshot(server.url, server.prefix);
    const tree = snapshot.keys.find((record) => record.key.endsWith(":treeApprovals"));
    expect(tree?.members).toEqual([member]);
    const findings = checkKeys(snapshot.keys, snapshot.prefix).findings;
    expect(findings.map((f) => f.severity)).toEqual(["note", "note"]);
  });
});
