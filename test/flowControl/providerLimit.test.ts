/**
 * A shared provider limit in Redis (issue 33, item 1), as two coordinators see it through two
 * connections: calls past the limit get a later turn, first come first served; the answer's
 * usage corrects a call's reserved tokens; a 429 told by one pauses the other's calls, and puts
 * a turn taken before it in line again after it.
 */
import { randomUUID } from "node:crypto";
import { clusterKeys, connectRedis, type RedisClient } from "@yiem/core";
import { keySlot, limitOfModel, ProviderLimit, waitForTurn } from "@yiem/core/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useRedisConnection } from "../support/redisConnection.js";

const t = useRedisConnection();
let other: RedisClient | undefined;
beforeAll(() => {
  other = connectRedis(t.server.url);
});
afterAll(async () => {
  await other?.quit();
});

/** The same fresh limit, as two coordinators hold it (two connections). */
function sharedLimit(fields: { requests?: number; tokens?: number; windowMs?: number }) {
  const name = `model-${randomUUID()}`;
  const limit = limitOfModel({ [name]: { windowMs: 1000, ...fields } }, name);
  if (!limit || !other) throw new Error("no limit");
  const keys = clusterKeys(t.server.prefix);
  return [new ProviderLimit(t.redis, keys, limit), new ProviderLimit(other, keys, limit)] as const;
}

describe("a shared provider limit", () => {
  it("admits up to its requests at once across coordinators, then gives later turns in order", async () => {
    const [a, b] = sharedLimit({ requests: 3 });
    const waits: number[] = [];
    const turns: number[] = []; // when each turn comes, on this clock
    for (let i = 0; i < 5; i++) {
      waits.push(await (i % 2 === 0 ? a : b).admit(`call-${i}`, 10));
      turns.push(Date.now() + (waits[i] as number));
    }
    expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
    expect(waits[3]).toBeGreaterThan(0);
    // Later than call 3's turn (the waits were read at different moments: some slack for that).
    expect(turns[4]).toBeGreaterThanOrEqual((turns[3] as number) - 50);
    // Asked again before its turn, a call keeps it (its wait only shrinks).
    expect(await b.admit("call-3", 10)).toBeLessThanOrEqual(waits[3] as number);
  });

  it("paces a limit of many calls a window: a burst of a few at once, then one call at a time", async () => {
    // A call every 31 ms, a burst of 2 or 3: the 40 asks take less than a few calls' time.
    const [a, b] = sharedLimit({ requests: 100, windowMs: 3000 });
    const waits: number[] = [];
    for (let i = 0; i < 40; i++) waits.push(await (i % 2 ? a : b).admit(`call-${i}`, 10));
    const atOnce = waits.filter((ms) => ms === 0).length;
    expect(atOnce).toBeGreaterThanOrEqual(2);
    expect(atOnce).toBeLessThan(20); // without pacing, all 40 (the window holds 100)
    // The others' turns come one after another: spread over at least a few hundred ms.
    const turns = await Promise.all(
      waits.flatMap((ms, i) =>
        ms === 0
          ? []
          : [
              waitForTurn(i % 2 ? a : b, 10, undefined, undefined, `call-${i}`).then(() =>
                Date.now(),
              ),
            ],
      ),
    );
    expect(Math.max(...turns) - Math.min(...turns)).toBeGreaterThan(200);
  });

  it("keeps room in a paced limit's burst for a tenant with nothing waiting: its call goes at once past another's backlog", async () => {
    // A call every 103 ms, a burst of 240 ms: the asks below take far less than a call's time.
    const [a, b] = sharedLimit({ requests: 100, windowMs: 10_000 });
    const flood = { name: "flood" };
    const waits: number[] = [];
    for (let i = 0; i < 30; i++) waits.push(await a.admit(`flood-${i}`, 10, flood));
    expect(waits.filter((ms) => ms === 0).length).toBeLessThan(10); // the backlog is paced
    // The backlog has waited past its first burst; its next asks, admitting whatever is due.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await a.admit(`flood-${waits.findIndex((ms) => ms > 0)}`, 10, flood);
    expect(await b.admit("small-0", 10, { name: "small" })).toBe(0);
  });

  it("reserves a call's estimated tokens and corrects them by the answer's usage", async () => {
    const [a, b] = sharedLimit({ tokens: 100 });
    expect(await a.admit("first", 60)).toBe(0);
    await a.settle("first", 10); // the answer reported 10 tokens, not 60
    expect(await b.admit("second", 60)).toBe(0);
    expect(await b.admit("third", 60)).toBeGreaterThan(0); // 10 + 60 + 60 > 100
  });

  it("pauses every coordinator's calls after a 429, and puts a turn taken before it in line again", async () => {
    const [a, b] = sharedLimit({ requests: 1 });
    expect(await a.admit("sent", 10)).toBe(0);
    const turn = await b.admit("waiting", 10);
    expect(turn).toBeGreaterThan(0);
    await a.refused("sent", 5000); // the provider answered 429, retry after 5 s
    expect(await b.admit("waiting", 10)).toBeGreaterThan(turn + 2000);
    const [, unlimited] = sharedLimit({});
    expect(await unlimited.admit("free", 10)).toBe(0); // another limit is not paused
  });

  it("makes a call whose turn came wait again when one sent late took its room", async () => {
    const [a, b] = sharedLimit({ requests: 1 }); // a turn counts 1 250 ms (the margin included)
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    expect(await a.admit("first", 10)).toBe(0);
    const lateTurn = await b.admit("late", 10);
    const nextTurn = (await a.admit("next", 10)) + Date.now();
    await sleep(lateTurn + 600); // its caller was busy: sent 600 ms after its turn
    expect(await b.admit("late", 10)).toBe(0);
    await sleep(Math.max(0, nextTurn - Date.now()));
    // Its turn came, but the window ending now holds the late call: it waits for the room.
    const again = await a.admit("next", 10);
    expect(again).toBeGreaterThan(400);
    expect(again).toBeLessThanOrEqual(1250);
  });

  it("counts a call sent at once from its answer, when asked: its request may have reached the provider late", async () => {
    const [a, b] = sharedLimit({ requests: 1 }); // a turn counts 1 250 ms (the margin included)
    expect(await a.admit("first", 10)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await a.settle("first", 10, true); // answered 500 ms after its turn
    expect(await b.admit("next", 10)).toBeGreaterThan(1000); // from the answer, not the turn
  });

  it("gives back the turn of a call whose wait was aborted", async () => {
    const [a, b] = sharedLimit({ requests: 1 });
    expect(await a.admit("sent", 10)).toBe(0);
    const first = await b.admit("aborted", 10);
    await b.cancel("aborted");
    expect(await a.admit("next", 10)).toBeLessThanOrEqual(first);
  });
});

describe("a limit's keys", () => {
  it("share one hash slot, so its scripts run on a Redis Cluster", () => {
    const keys = clusterKeys("yiem", { cluster: true, shards: 3 }).modelLimit("gpt-4o/2024:x");
    const slots = new Set(Object.values(keys).map(keySlot));
    expect(slots.size).toBe(1);
  });
});

describe("a call waiting for its turn", () => {
  it("stops waiting when its run aborts, and gives the turn back", async () => {
    const [a, b] = sharedLimit({ requests: 1 });
    expect(await a.admit("sent", 10)).toBe(0);
    const controller = new AbortController();
    const waiting = waitForTurn(b, 10, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(await waiting).toBeUndefined();
    const next = await a.admit("next", 10); // its turn is the one the aborted call had
    expect(next).toBeGreaterThan(0);
    expect(await a.admit("after", 10)).toBeGreaterThan(next);
  });
});
