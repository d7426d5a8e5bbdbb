/**
 * A run's limits at its open, on a real Redis: the budgets feature's read of its requests' own
 * budgets and the tenants feature's read of its tree's tenant go out together (one round trip,
 * not one per feature), each still lowering the config as before; a failed read still fails the
 * run's `limitConfig` (`SessionStoreError`), is read again by the next one, and a read left
 * without its `limitConfig` (an earlier feature failed) is no unhandled rejection.
 */
import { clusterKeys, type RedisClient } from "@yiem/core";
import { budgetsFeature, openFeatureRuns, silentLogger, tenantsFeature } from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import { useRedisConnection } from "../support/redisConnection.js";

const t = useRedisConnection();

/** One command the features sent: its name, when it went out and when its reply came. */
interface Sent {
  name: string;
  at: number;
  settledAt?: number;
}

/** The real connection, each command it sends noted in `sent` (in order). */
function noting(redis: RedisClient, sent: Sent[]): RedisClient {
  let clock = 0;
  return new Proxy(redis, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        const note: Sent = { name: property, at: clock++ };
        sent.push(note);
        const settle = () => {
          note.settledAt = clock++;
        };
        result.then(settle, settle);
        return result;
      };
    },
  });
}

/** The budgets and tenants features' parts of a new run of `sessionId` answering `requestIds`. */
async function openRun(command: RedisClient, sessionId: string, requestIds: string[]) {
  const keys = clusterKeys(t.server.prefix);
  const features = [
    budgetsFeature({ command, keys }),
    tenantsFeature({ command, keys, leaseMs: 30_000 }),
  ];
  const session = {
    sessionId,
    token: "token-1",
    state: { messages: [], tools: [], systemPrompt: "" },
    agent: () => undefined,
    log: silentLogger,
  };
  const holds = features.flatMap((feature) => feature.hold?.(session as never) ?? []);
  const run = {
    runId: "run-1",
    kind: "new",
    abortedAtOpen: false,
    requestIds,
    runStart: 0,
    treeRoot: () => ({ sessionId, runId: "run-1" }),
    usage: () => ({}),
  };
  return openFeatureRuns(holds, run as never);
}

describe("a run's limits at its open", () => {
  it("reads the requests' budgets and the tenant in one round trip, and applies both", async () => {
    const keys = clusterKeys(t.server.prefix);
    await t.redis.hset(keys.inputBudgets("s-1"), "r-1", JSON.stringify({ maxModelCalls: 2 }));
    await t.redis.set(keys.sessionTenant("s-1"), "acme");
    const sent: Sent[] = [];
    const runs = await openRun(noting(t.redis, sent), "s-1", ["r-1"]);
    const config: { budget?: { maxModelCalls?: number }; tenant?: string } = {
      budget: { maxModelCalls: 5 },
    };
    await runs.limitConfig(config as never, ["r-1"]);

    expect(config).toMatchObject({ budget: { maxModelCalls: 2 }, tenant: "acme" });
    const budgets = sent.find((command) => command.name === "hmget");
    const tenant = sent.find((command) => command.name === "getex");
    // The tenant's read went out before the budgets' came back: both were in flight at once.
    expect(tenant?.at).toBeLessThan(budgets?.settledAt ?? -1);
    expect(budgets?.at).toBeLessThan(tenant?.settledAt ?? -1);
  });

  it("fails limitConfig on a failed read, reads again on the next, and leaves no rejection unhandled", async () => {
    const keys = clusterKeys(t.server.prefix);
    // Keys of the wrong type: Redis refuses both reads (WRONGTYPE).
    await t.redis.set(keys.inputBudgets("s-2"), "not a hash");
    await t.redis.hset(keys.sessionTenant("s-2"), "not", "a string");
    const runs = await openRun(t.redis, "s-2", ["r-1"]);
    // The budgets feature fails first: the tenant's read, also failing, waits for no one.
    await expect(runs.limitConfig({} as never, ["r-1"])).rejects.toMatchObject({
      name: "SessionStoreError",
    });
    await t.redis.del(keys.inputBudgets("s-2"));
    await expect(runs.limitConfig({} as never, ["r-1"])).rejects.toMatchObject({
      name: "SessionStoreError",
      message: expect.stringContaining("WRONGTYPE"),
    });
    await t.redis.del(keys.sessionTenant("s-2"));
    await t.redis.set(keys.sessionTenant("s-2"), "acme");
    const config: { tenant?: string } = {};
    await runs.limitConfig(config as never, ["r-1"]);
    expect(config.tenant).toBe("acme");
    // An unhandled rejection would fail the file (vitest reports it) once the event loop turns.
    await new Promise((resolve) => setImmediate(resolve));
  });
});
