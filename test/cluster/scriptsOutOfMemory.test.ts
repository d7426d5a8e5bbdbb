import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { clusterKeys, connectRedis, type RedisClient } from "@yiem/core";
import { SessionStore } from "@yiem/core/internal";
import { startTestRedis, type TestRedis } from "@yiem/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { userMessage } from "../support/messages.js";
import { repoRoot } from "../support/processes.js";

/**
 * Yiem's scripts are all or nothing when Redis is out of memory (`maxmemory` under
 * `noeviction`): each declares its flags on a shebang line (Redis 7), so Redis refuses a script
 * that may write as a whole, before it runs, where a script without one was refused only at
 * its first write that may grow memory, and ran on past `maxmemory` when a delete came first.
 * The scripts that only delete or renew (the lease's), and the finished marker of a tool job,
 * run all the same (`allow-oom`). Checked on a private Redis through what it stores.
 */

let server: TestRedis;
let redis: RedisClient;
let admin: RedisClient;
let store: SessionStore;
const keys = () => clusterKeys(server.prefix);

beforeAll(async () => {
  server = await startTestRedis({ privateServer: true });
  redis = connectRedis(server.url);
  admin = connectRedis(server.url);
  store = new SessionStore(redis, keys());
  await admin.config("SET", "maxmemory-policy", "noeviction");
});

afterEach(async () => {
  await admin.config("SET", "maxmemory", "0");
});

afterAll(async () => {
  await redis.quit();
  await admin.quit();
  await server.stop();
});

/** Every key of the test's prefix with its value (`DUMP`): what a refused script must not change. */
async function snapshot(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let cursor = "0";
  do {
    const [next, names] = await admin.scan(cursor, "MATCH", `${server.prefix}:*`, "COUNT", 1000);
    cursor = next;
    for (const name of names) {
      const dumped = await admin.dumpBuffer(name);
      if (dumped) found.set(name, dumped.toString("hex"));
    }
  } while (cursor !== "0");
  return found;
}

/** Redis refuses every write that may grow memory from now on. */
async function outOfMemory(): Promise<void> {
  await admin.config("SET", "maxmemory", "1");
  await expect(admin.set(`${server.prefix}:probe`, "x")).rejects.toThrow(/OOM/);
}

describe("Yiem's scripts when Redis is out of memory", () => {
  it("refuses a script whose first write only deletes as a whole: nothing of it is stored", async () => {
    const sessionId = randomUUID();
    const k = keys();
    // A request on its way (`YiemClient.send` marks it), recorded while Redis is out of memory:
    // enqueueInput-8 first takes it out of `submitted` (ZREM), then records the input.
    const sent = randomUUID();
    await admin.zadd(k.submitted(sessionId), Date.now() * 1024, sent);
    // An input waiting, and an abort request of an open run: startRun-9 begins with a ZPOPMIN
    // of the waiting inputs, markRunAborted-2 with a DEL of the request.
    const waiting = randomUUID();
    await store.enqueueInput(sessionId, waiting, "input", userMessage("hi"), Date.now() * 1024);
    const other = randomUUID();
    await admin.hset(k.run(other), "runId", "r1");
    await admin.set(k.abortRequested(other), "r1");
    await admin.set(k.lease(sessionId), "holder", "PX", 60_000);
    const before = await snapshot();

    await outOfMemory();
    const message = userMessage("recorded under OOM");
    await expect(
      store.enqueueInput(sessionId, sent, "input", message, Date.now() * 1024),
    ).rejects.toThrow(/OOM/);
    await expect(store.startRun(sessionId, "holder")).rejects.toThrow(/OOM/);
    await expect(store.markRunAborted(other)).rejects.toThrow(/OOM/);
    await admin.config("SET", "maxmemory", "0");

    const after = await snapshot();
    after.delete(k.lease(sessionId)); // its ttl is part of its dump: compared apart
    before.delete(k.lease(sessionId));
    expect(after).toEqual(before);
    expect(await admin.get(k.lease(sessionId))).toBe("holder");
  });

  it("runs the lease's scripts, which store nothing new: a lease is renewed and released", async () => {
    const sessionId = randomUUID();
    expect(await store.acquire(sessionId, "holder", 1_000)).toBe(true);
    await outOfMemory();
    expect(await store.renew(sessionId, "holder", 60_000)).toBe(true);
    expect(await admin.pttl(keys().lease(sessionId))).toBeGreaterThan(1_000);
    expect(await store.releaseIfIdle(sessionId, "holder")).toBe("released");
    expect(await admin.exists(keys().lease(sessionId))).toBe(0);
  });
});

const CORE_SRC = join(repoRoot, "packages/core/src");

/** Every script file of `packages/core` (shared folder, then each feature's), by name. */
function scriptFiles(): Array<{ name: string; text: string }> {
  const shared = join(CORE_SRC, "redis/scripts");
  const features = readdirSync(join(CORE_SRC, "features"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(CORE_SRC, "features", entry.name, "scripts"));
  return [shared, ...features].flatMap((folder) => {
    let files: string[];
    try {
      files = readdirSync(folder);
    } catch {
      return [];
    }
    return files
      .filter((file) => file.endsWith(".lua"))
      .map((file) => ({ name: file, text: readFileSync(join(folder, file), "utf8") }));
  });
}

describe("the scripts' flags", () => {
  it("every script starts with its shebang; a library has none; allow-oom only where documented", () => {
    const flags = new Map<string, string>();
    for (const { name, text } of scriptFiles()) {
      const first = text.split("\n", 1)[0] ?? "";
      if (name.endsWith(".lib.lua")) {
        expect(first.startsWith("#!"), `${name} is pasted into scripts: no shebang`).toBe(false);
      } else {
        expect(first, name).toMatch(/^#!lua( flags=(allow-oom|no-writes))?$/);
        flags.set(name, first);
      }
    }
    const allowOom = [...flags].filter(([, line]) => line.includes("allow-oom")).map(([n]) => n);
    expect(allowOom.sort()).toEqual([
      "completeJob-6.lua",
      "forgetApprovals-4.lua",
      "publishLiveEvent-1.lua",
      "recordToolEnd-1.lua",
      "releaseLease-1.lua",
      "releaseLeaseIfIdle-4.lua",
      "renewLease-1.lua",
    ]);
  });
});
