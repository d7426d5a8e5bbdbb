import { YiemClient } from "@yiem/core";
import { toolJobId } from "@yiem/core/internal";
import type { ScriptedReply, ScriptedRequest } from "@yiem/testing";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { documentedAclLine } from "../support/aclRoles.js";
import { useTestCluster } from "../support/cluster.js";

const ADMIN_PASSWORD = "redis-canary-pass-7d1";
const WORKER_PASSWORD = "worker-canary-pass-3c9";
const API_KEY = "sk-test-canary-key";
const BOARD_PASSWORD = "board-canary-pass-91e";
const BOARD_AUTH = {
  authorization: `Basic ${Buffer.from(`admin:${BOARD_PASSWORD}`).toString("base64")}`,
};

/** The worker role of docs/SECURITY.md: tool queues, event keys and channels, its own announcement; no session data. */
const WORKER_ACL = [documentedAclLine("worker", WORKER_PASSWORD)];

const CLIENT_PASSWORD = "client-canary-pass-5b2";

/** The client role of docs/SECURITY.md: add coordinator jobs, read events, responses, transcripts and workers. */
const CLIENT_ACL = [documentedAclLine("client", CLIENT_PASSWORD)];

function respond(request: ScriptedRequest): ScriptedReply {
  const messages = (request.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === "tool") {
    return {
      kind: "text",
      text: messages
        .filter((m) => m.role === "tool")
        .map((m) => String(m.content))
        .join(" | "),
    };
  }
  return {
    kind: "toolCalls",
    calls: [
      { id: "s1", name: "sleepFor", arguments: { ms: 50, label: "one", steps: 2 } },
      { id: "s2", name: "sleepFor", arguments: { ms: 50, label: "two" } },
    ],
  };
}

let port = 0;

const cluster = useTestCluster({
  workers: 2,
  model: { respond },
  redis: {
    privateServer: true,
    requirePass: ADMIN_PASSWORD,
    aclLines: [...WORKER_ACL, ...CLIENT_ACL],
  },
  workerEnv: {},
  env: {
    YIEM_ADMIN_USER: "admin",
    YIEM_ADMIN_PASSWORD: BOARD_PASSWORD,
    YIEM_ADMIN_READONLY: "1",
    // Completed tool jobs kept (the default, said here: 0 would leave Bull Board none to show).
    YIEM_TOOL_JOB_RETENTION_S: "3600",
  },
  redisUrl: (redis) => {
    port = Number(new URL(redis.url).port);
    return redis.url;
  },
});

describe("secrets and access", () => {
  it("guards Bull Board with basic auth and serves it read-only", async () => {
    const base = `${cluster.coordinatorUrls[0]}/admin/queues`;
    expect((await fetch(base)).status).toBe(401);
    expect((await fetch(base, { headers: { authorization: "Basic bm9wZTpub3Bl" } })).status).toBe(
      401,
    );
    const api = (await (await fetch(`${base}/api/queues`, { headers: BOARD_AUTH })).json()) as {
      queues: Array<{ name: string; readOnlyMode: boolean }>;
    };
    expect(api.queues.length).toBeGreaterThan(0);
    expect(api.queues.every((q) => q.readOnlyMode)).toBe(true);
    expect((await fetch(`${cluster.coordinatorUrls[0]}/healthz`)).status).toBe(200);
  });

  it("runs with a Redis password, and a worker ACL user runs tools but cannot read session data", async () => {
    const worker = await cluster.addWorkerWith({
      REDIS_URL: `redis://worker:${WORKER_PASSWORD}@127.0.0.1:${port}`,
    });
    for (const other of cluster.workers.filter((w) => w !== worker)) {
      other.signal("SIGTERM");
      await other.exited;
    }
    const { sessionId, runId } = await cluster.client.send("go");
    const response = await cluster.client.waitForResponse(runId, { timeoutMs: 20_000 });
    expect(response.content).toEqual([{ type: "text", text: "one done | two done" }]);
    const admin = new Redis(cluster.redis.url);
    const marker = `${cluster.redis.prefix}:toolDone:tools-default:${toolJobId(sessionId, runId, "s1")}`;
    expect(await admin.exists(marker)).toBe(1); // the ACL lets the worker mark finished jobs
    admin.disconnect();
    const asWorker = new Redis(`redis://worker:${WORKER_PASSWORD}@127.0.0.1:${port}`);
    await expect(
      asWorker.lrange(`${cluster.redis.prefix}:s:{${sessionId}}:messages`, 0, -1),
    ).rejects.toThrow(/NOPERM/);
    asWorker.disconnect();
  });

  it("lets a client ACL user send, watch and read answers, but not write any session state", async () => {
    const client = new YiemClient({
      redis: `redis://client:${CLIENT_PASSWORD}@127.0.0.1:${port}`,
      prefix: cluster.redis.prefix,
    });
    try {
      const { sessionId, runId } = await client.send("go");
      const response = await client.waitForResponse(runId, { timeoutMs: 20_000 });
      expect(response.content).toEqual([{ type: "text", text: "one done | two done" }]);
      const ends = [];
      for await (const event of client.events(sessionId, { fromStart: true, untilAgentEnd: true }))
        ends.push(event.type);
      expect(ends.at(-1)).toBe("agentEnd");
      expect((await client.messages(sessionId)).length).toBeGreaterThan(2);
      // `yiem workers` reads the limited tools' queues (the test tools include two).
      expect((await client.limitedToolLoad()).map((l) => l.tool)).toEqual([
        "limitedStep",
        "ratedStep",
      ]);
      const asClient = new Redis(`redis://client:${CLIENT_PASSWORD}@127.0.0.1:${port}`);
      const session = `${cluster.redis.prefix}:s:{${sessionId}}`;
      for (const write of [
        () => asClient.rpush(`${session}:messages`, '{"role":"assistant","content":[]}'),
        () => asClient.hset(`${session}:inputs`, "forged", "{}"),
        () => asClient.set(`${session}:lease`, "mine"),
        () => asClient.set(`${session}:response:${runId}`, "{}"),
      ]) {
        await expect(write()).rejects.toThrow(/NOPERM/);
      }
      asClient.disconnect();
    } finally {
      await client.close();
    }
  });

  it("never shows the API key or a Redis password in logs, events, job data or Bull Board", async () => {
    const logs = [...cluster.coordinators, ...cluster.workers].flatMap((p) => p.lines).join("\n");
    const admin = new Redis(cluster.redis.url);
    const keys = await admin.keys(`${cluster.redis.prefix}:*`);
    const dump: string[] = [];
    for (const key of keys) {
      const type = await admin.type(key);
      if (type === "string") dump.push(String(await admin.get(key)));
      if (type === "hash") dump.push(JSON.stringify(await admin.hgetall(key)));
      if (type === "list") dump.push(JSON.stringify(await admin.lrange(key, 0, -1)));
      if (type === "stream") dump.push(JSON.stringify(await admin.xrange(key, "-", "+")));
    }
    admin.disconnect();
    const boardUrl = `${cluster.coordinatorUrls[0]}/admin/queues/api/queues?activeQueue=tools-default&status=completed`;
    const board = await (await fetch(boardUrl, { headers: BOARD_AUTH })).text();
    expect(board).toContain("one done"); // the board did show the finished jobs
    for (const secret of [
      API_KEY,
      ADMIN_PASSWORD,
      WORKER_PASSWORD,
      BOARD_PASSWORD,
      CLIENT_PASSWORD,
    ]) {
      expect(logs).not.toContain(secret);
      expect(dump.join("\n")).not.toContain(secret);
      expect(board).not.toContain(secret);
    }
    expect(dump.join("\n")).toContain("one done"); // the dump did read the stored data
  });
});
