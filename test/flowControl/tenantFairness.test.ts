/**
 * Tenants under a shared provider limit (issue 33, item 2), in Redis: calls waiting for their
 * turn are served tenant by tenant, so one tenant's backlog does not hold back another's one
 * call beyond its fair share, and shares weigh the turns. Each scenario puts calls in line in a
 * known order, then has every waiting call ask again round after round (as `waitForTurn` does)
 * and reads the order they were admitted in.
 */
import { randomUUID } from "node:crypto";
import { ConfigError, clusterKeys, readTenants, settingsOfTenant, YiemClient } from "@yiem/core";
import {
  type CallTenant,
  dayOf,
  limitOfModel,
  ProviderLimit,
  TenantDayLedger,
  TenantRunSlots,
} from "@yiem/core/internal";
import { describe, expect, it } from "vitest";
import { useRedisConnection } from "../support/redisConnection.js";

const t = useRedisConnection();

/** A fresh limit of `requests` per 200 ms window. */
function freshLimit(requests: number): ProviderLimit {
  const name = `model-${randomUUID()}`;
  const limit = limitOfModel({ [name]: { requests, windowMs: 200 } }, name);
  if (!limit) throw new Error("no limit");
  return new ProviderLimit(t.redis, clusterKeys(t.server.prefix), limit);
}

interface Call {
  id: string;
  tenant: CallTenant;
}

function callsOf(tenant: CallTenant, count: number): Call[] {
  return Array.from({ length: count }, (_, i) => ({ id: `${tenant.name}-${i}`, tenant }));
}

/** Puts `calls` in line in this order: the ids of those admitted at once. */
async function inLine(limit: ProviderLimit, calls: Call[]): Promise<string[]> {
  const admitted: string[] = [];
  for (const call of calls)
    if ((await limit.admit(call.id, 10, call.tenant)) === 0) admitted.push(call.id);
  return admitted;
}

/**
 * Has every waiting call of `calls` ask again, round after round (a round a window apart),
 * until `count` were admitted: their ids, in the order of the rounds they were admitted in.
 */
async function admittedInRounds(
  limit: ProviderLimit,
  calls: Call[],
  count: number,
): Promise<string[][]> {
  const waiting = [...calls];
  const rounds: string[][] = [];
  while (rounds.flat().length < count) {
    await new Promise((resolve) => setTimeout(resolve, 120));
    const round: string[] = [];
    for (const call of [...waiting]) {
      if ((await limit.admit(call.id, 10, call.tenant)) !== 0) continue;
      round.push(call.id);
      waiting.splice(waiting.indexOf(call), 1);
    }
    if (round.length > 0) rounds.push(round);
  }
  for (const call of waiting) await limit.cancel(call.id);
  return rounds;
}

/**
 * Has the waiting `calls` ask again, in this order, a round every 120 ms, until one is
 * admitted: its id (a limit of one request per window admits one a round). The others wait on.
 */
async function nextAdmitted(limit: ProviderLimit, calls: Call[]): Promise<string> {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 120));
    for (const call of calls)
      if ((await limit.admit(call.id, 10, call.tenant)) === 0) return call.id;
  }
}

describe("tenants waiting under a shared provider limit", () => {
  it("admits a tenant's one call ahead of most of another's backlog", async () => {
    const limit = freshLimit(4);
    const flood = callsOf({ name: "flood" }, 60);
    expect(await inLine(limit, flood)).toHaveLength(4); // the window is full
    const small = callsOf({ name: "small" }, 1);
    expect(await inLine(limit, small)).toEqual([]);
    // The waiting ones ask in the flood's order first: fairness, not who asks first, decides.
    const rounds = await admittedInRounds(limit, [...flood.slice(4), ...small], 8);
    const smallRound = rounds.findIndex((round) => round.includes("small-0"));
    expect(smallRound).toBeGreaterThanOrEqual(0);
    expect(smallRound).toBeLessThanOrEqual(1); // the flood's next window or the one after
    const floodBefore = rounds.slice(0, smallRound + 1).flat().length - 1;
    expect(floodBefore).toBeLessThanOrEqual(7); // of 56 waiting: at most two windows' worth
  });

  it("gives the next turn to a tenant with nothing waiting, ahead of a backlog's next call", async () => {
    const limit = freshLimit(1);
    // Ids that sort the flood's first: a tie between tags would go to the flood.
    const flood = callsOf({ name: "a-flood" }, 6);
    expect(await inLine(limit, flood)).toEqual(["a-flood-0"]);
    const small = callsOf({ name: "z-small" }, 1);
    expect(await inLine(limit, small)).toEqual([]);
    const rounds = await admittedInRounds(limit, [...flood.slice(1), ...small], 2);
    expect(rounds.flat().slice(0, 2)).toEqual(["z-small-0", "a-flood-1"]);
  });

  it("gives a tenant's next call the turn it ties for with a backlog's call", async () => {
    const limit = freshLimit(1);
    expect(await inLine(limit, callsOf({ name: "filler" }, 1))).toEqual(["filler-0"]);
    const flood = callsOf({ name: "a-flood" }, 6); // ids that sort first: a tie by id is theirs
    const [small0, small1] = callsOf({ name: "z-small" }, 2) as [Call, Call];
    expect(await inLine(limit, flood)).toEqual([]);
    expect(await nextAdmitted(limit, flood)).toBe("a-flood-0");
    expect(await inLine(limit, [small0])).toEqual([]);
    expect(await nextAdmitted(limit, [...flood.slice(1), small0])).toBe("z-small-0");
    // Its next call starts where its first finished, as the flood's next does.
    expect(await inLine(limit, [small1])).toEqual([]);
    expect(await nextAdmitted(limit, [...flood.slice(1), small1])).toBe("z-small-1");
    expect(await nextAdmitted(limit, flood.slice(1))).toBe("a-flood-1");
  });

  it("serves a tenant first come first served among its own calls", async () => {
    const limit = freshLimit(3);
    const calls = callsOf({ name: "one" }, 12);
    expect(await inLine(limit, calls)).toEqual(["one-0", "one-1", "one-2"]);
    // Asked in the reverse order, the oldest are admitted first: no call in an earlier round
    // than one older than it (a round on a slow machine may see the window slide: four).
    const rounds = await admittedInRounds(limit, calls.slice(3).reverse(), 6);
    const byAge = (round: string[]) =>
      [...round].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)));
    expect(rounds.flatMap(byAge).slice(0, 6)).toEqual([
      "one-3",
      "one-4",
      "one-5",
      "one-6",
      "one-7",
      "one-8",
    ]);
    expect(rounds[0]?.length).toBeLessThan(6); // a window's worth a round, not the whole line
  });

  it("weighs turns by the tenants' shares", async () => {
    const limit = freshLimit(4);
    await inLine(limit, callsOf({ name: "filler" }, 4)); // the window is full
    const heavy = callsOf({ name: "heavy", share: 3 }, 30);
    const light = callsOf({ name: "light", share: 1 }, 30);
    const both = heavy.flatMap((call, i) => [call, light[i] as Call]);
    expect(await inLine(limit, both)).toEqual([]);
    const order = (await admittedInRounds(limit, both, 20)).flat().slice(0, 20);
    const heavyCount = order.filter((id) => id.startsWith("heavy")).length;
    expect(heavyCount).toBeGreaterThanOrEqual(14); // 3 for 1: 15 of 20
    expect(heavyCount).toBeLessThanOrEqual(16);
  });

  it("gives a call admitted before a 429 it did not send yet its place at the head again", async () => {
    const limit = freshLimit(1);
    expect(await limit.admit("sent", 10, { name: "a" })).toBe(0);
    const waits = [await limit.admit("next", 10, { name: "a" })];
    waits.push(await limit.admit("other", 10, { name: "a" }));
    expect(waits.every((ms) => ms > 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 460)); // "sent" leaves the window
    // "other" asks first and admits the head of the line, "next", which has not asked yet.
    expect(await limit.admit("other", 10, { name: "a" })).toBeGreaterThan(0);
    await limit.refused("sent", 1000); // a 429 arrives before "next" was sent
    expect(await limit.admit("next", 10, { name: "a" })).toBeGreaterThan(500);
    // A tenant with nothing waiting arrives during the pause: "next" stays ahead of it too.
    expect(await limit.admit("newcomer", 10, { name: "b" })).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1050));
    expect(await limit.admit("newcomer", 10, { name: "b" })).toBeGreaterThan(0); // "next" is first
    expect(await limit.admit("other", 10, { name: "a" })).toBeGreaterThan(0);
    expect(await limit.admit("next", 10, { name: "a" })).toBe(0);
  });
});

describe("YIEM_TENANTS", () => {
  it("reads shares and budgets per day, and refuses a malformed one naming the tenant", () => {
    const tenants = readTenants(
      '{ "acme": { "share": 2, "budgetPerDay": { "maxModelCalls": 10 } }, "*": { "share": 0.5 } }',
    );
    expect(settingsOfTenant(tenants, "acme")).toEqual({
      share: 2,
      budgetPerDay: { maxModelCalls: 10 },
    });
    expect(settingsOfTenant(tenants, "other")).toEqual({ share: 0.5 }); // "*"
    expect(settingsOfTenant(undefined, "other")).toEqual({});
    expect(readTenants(undefined)).toBeUndefined();
    expect(() => readTenants('{ "a": { "share": 0 } }')).toThrow(
      'YIEM_TENANTS: tenant "a": share must be a number above 0, got 0',
    );
    expect(() => readTenants('{ "a": { "budgetPerDay": { "maxToolCalls": 1 } } }')).toThrow(
      /unknown limit "maxToolCalls"/,
    );
    expect(() => readTenants('{ "a": { "runs": 1 } }')).toThrow(ConfigError);
  });

  it('reads a cap on runs at once, for a tenant or for "*", and refuses one not a whole number of 1 or more', () => {
    const tenants = readTenants('{ "acme": { "runsAtOnce": 3 }, "*": { "runsAtOnce": 1 } }');
    expect(settingsOfTenant(tenants, "acme").runsAtOnce).toBe(3);
    expect(settingsOfTenant(tenants, "other").runsAtOnce).toBe(1);
    for (const bad of ["0", "1.5", '"2"', "-1"])
      expect(() => readTenants(`{ "acme": { "runsAtOnce": ${bad} } }`)).toThrow(
        `YIEM_TENANTS: tenant "acme": runsAtOnce must be a whole number of 1 or more, got ${JSON.parse(bad)}`,
      );
  });

  it("refuses a request whose tenant could not name a Redis key, naming the field", async () => {
    const client = new YiemClient({ redis: t.server.url, prefix: t.server.prefix });
    try {
      await expect(client.send("hi", { tenant: "a}{b" })).rejects.toThrow(
        "tenant: must be 1-128 characters, without white space or braces",
      );
    } finally {
      await client.close();
    }
  });
});

describe("a tenant's places for its runs at once", () => {
  it("frees the place of a run no one keeps any more (its coordinator died) after its time to live", async () => {
    const slots = new TenantRunSlots(t.redis, clusterKeys(t.server.prefix), 300);
    const tenant = `capped-${randomUUID()}`;
    expect(await slots.take(tenant, "first", 1)).toBe(true);
    expect(await slots.take(tenant, "first", 1)).toBe(true); // its own place again
    expect(await slots.take(tenant, "second", 1)).toBe(false); // the cap is full
    await new Promise((resolve) => setTimeout(resolve, 400)); // "first" is never renewed
    expect(await slots.take(tenant, "second", 1)).toBe(true);
  });

  it("keeps a running run's place past its time to live, and frees it when released", async () => {
    const slots = new TenantRunSlots(t.redis, clusterKeys(t.server.prefix), 300);
    const tenant = `capped-${randomUUID()}`;
    const kept = slots.keep(tenant, "running");
    await new Promise((resolve) => setTimeout(resolve, 500)); // renewed every 100 ms
    expect(await slots.take(tenant, "next", 1)).toBe(false);
    kept.release();
    await expect.poll(() => slots.take(tenant, "next", 1)).toBe(true);
  });
});

describe("a tenant's ledger of the day", () => {
  const ledgerOf = () => new TenantDayLedger(t.redis, clusterKeys(t.server.prefix));
  const usage = (totalTokens: number) => ({
    inputTokens: totalTokens,
    outputTokens: 0,
    reasoningTokens: 0,
    cachedInputTokens: 0,
    totalTokens,
    modelCalls: 0,
    toolCalls: 0,
  });

  it("reserves model calls of every run of the tenant until its budget, then refuses", async () => {
    const ledger = ledgerOf();
    const tenant = `t-${randomUUID()}`;
    const budget = { maxModelCalls: 3 };
    const one = { sessionId: "s-1", runId: "r-1" };
    const two = { sessionId: "s-2", runId: "r-2" };
    expect(await ledger.request(tenant, budget, one, "modelCall", usage(0))).toBeUndefined();
    // A child's start prepays its first model call: the child then spends it.
    expect(await ledger.request(tenant, budget, one, "childRun", usage(0), "s-c")).toBeUndefined();
    const child = { sessionId: "s-c", runId: "r-c" };
    expect(await ledger.request(tenant, budget, child, "modelCall", usage(0))).toBeUndefined();
    expect(await ledger.request(tenant, budget, two, "modelCall", usage(0))).toBeUndefined();
    expect(await ledger.request(tenant, budget, two, "modelCall", usage(0))).toBe(
      `maxModelCalls (3 model calls a day for tenant ${tenant}; the tenant used 3 today)`,
    );
  });

  it("counts each run's tokens once, however often it reports them", async () => {
    const ledger = ledgerOf();
    const tenant = `t-${randomUUID()}`;
    const budget = { maxTokens: 100 };
    const node = { sessionId: "s-1", runId: "r-1" };
    await ledger.request(tenant, budget, node, "report", usage(60));
    await ledger.request(tenant, budget, node, "report", usage(60)); // a resumed run, again
    expect(await ledger.request(tenant, budget, node, "modelCall", usage(60))).toBeUndefined();
    await ledger.request(tenant, budget, node, "finish", usage(100));
    const day = await t.redis.hgetall(
      clusterKeys(t.server.prefix).tenantDay(tenant, dayOf(Date.now())),
    );
    expect(day).toMatchObject({ tokens: "100", modelCalls: "1" });
    expect(Object.keys(day).filter((field) => field.startsWith("s-1"))).toEqual([]); // forgotten
    expect(await ledger.request(tenant, budget, node, "modelCall", usage(0))).toMatch(/^maxTokens/);
  });
});
