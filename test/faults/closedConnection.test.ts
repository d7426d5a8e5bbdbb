/**
 * A process's heartbeat thread holds a sharded subscription of its life's own channel, which
 * Redis drops the moment the process's sockets close. A coordinator asks for it once a life's
 * beats are a beat and a quarter late: a SIGKILLed process is found dead then, well before its
 * heartbeat runs out; a SIGSTOPped one keeps its subscription and waits for its ttl, as before
 * (docs/RELIABILITY.md, "Failure detector"). A long ttl (8 s: a beat every 1.6 s, late after
 * 2 s) keeps the two apart on a loaded machine.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { clusterKeys, type RedisClient } from "@yiem/core";
import type { TestProcess } from "@yiem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestCluster } from "../support/cluster.js";

const TTL_MS = 8000;

describe.each([
  ["a single Redis", false],
  ["a Redis Cluster", true],
])("faults: a closed connection tells a dead process, on %s", (_, redisCluster) => {
  const cluster = useTestCluster({
    coordinators: 1,
    workers: 2,
    env: { YIEM_ALIVE_TTL_MS: String(TTL_MS) },
    redisCluster,
  });

  let redis: RedisClient;
  let startedAt = 0;

  beforeAll(() => {
    redis = cluster.connectRedis();
    startedAt = Date.now();
  });

  /**
   * Waits until the coordinator has been up a ttl: before that, on a Redis as young, its looks
   * give every expired life a ttl more (the start grace, docs/RELIABILITY.md), and a life would
   * be found late. In file order the SIGSTOP case has spent it already; run alone, a case has not.
   */
  async function pastStartGrace(): Promise<void> {
    await sleep(Math.max(0, startedAt + TTL_MS - Date.now()));
  }

  afterAll(() => {
    redis?.disconnect();
  });

  /** Every life in the `alive` set and until when it is alive (Redis' clock, ms). */
  async function aliveUntil(): Promise<Map<string, number>> {
    const keys = clusterKeys(cluster.redis.prefix);
    const flat = await redis.zrange(keys.alive, 0, -1, "WITHSCORES");
    const lives = new Map<string, number>();
    for (let i = 0; i < flat.length; i += 2) lives.set(flat[i] as string, Number(flat[i + 1]));
    return lives;
  }

  /** When life `life` was found dead (Redis' clock, ms), or null if it was not. */
  async function foundDeadAt(life: string): Promise<number | null> {
    const score = await redis.zscore(clusterKeys(cluster.redis.prefix).dead, life);
    return score === null ? null : Number(score);
  }

  /**
   * The life of `worker`, told from the others by its beats: stopped (SIGSTOP) for a beat and a
   * half, it is the only one whose heartbeat did not move.
   */
  async function lifeOf(worker: TestProcess): Promise<string> {
    const before = await aliveUntil();
    worker.signal("SIGSTOP");
    await sleep((TTL_MS / 5) * 1.5);
    const after = await aliveUntil();
    worker.signal("SIGCONT");
    const still = [...before].filter(([life, until]) => after.get(life) === until);
    if (still.length !== 1)
      throw new Error(`expected one life to stand still, got ${still.length}`);
    return (still[0] as [string, number])[0];
  }

  /** Resolves once `life` is watched: its subscription held and a beat recorded it. */
  async function watchedSoon(life: string): Promise<void> {
    const watched = clusterKeys(cluster.redis.prefix).watched;
    for (let i = 0; i < 200; i++) {
      if ((await redis.sismember(watched, life)) === 1) return;
      await sleep(100);
    }
    throw new Error(`life ${life} was never watched`);
  }

  /** SIGKILLs `worker`; resolves with until when each life is alive once its last beat landed. */
  async function killWorker(worker: TestProcess) {
    worker.signal("SIGKILL");
    await new Promise((resolve) => worker.child.once("exit", resolve));
    await sleep(100); // a beat that was on its way has landed
    return aliveUntil();
  }

  /** When `life` is found dead (Redis' clock, ms), waiting up to 20 s; null if it is not. */
  async function awaitFoundDead(life: string): Promise<number | null> {
    for (let i = 0; i < 200; i++) {
      await sleep(100);
      const foundAt = await foundDeadAt(life);
      if (foundAt !== null) return foundAt;
    }
    return null;
  }

  it("keeps a SIGSTOPped worker alive past its late beats: its subscription holds", async () => {
    const worker = cluster.workers[1] as TestProcess;
    const life = await lifeOf(worker);
    await watchedSoon(life);
    await sleep(TTL_MS / 5); // beating again
    worker.signal("SIGSTOP");
    try {
      await sleep(TTL_MS * 0.7); // beats over three late, the ttl not run out
      expect(await foundDeadAt(life)).toBeNull();
      expect((await aliveUntil()).has(life)).toBe(true);
    } finally {
      worker.signal("SIGCONT");
    }
  }, 60_000);

  it("finds a worker SIGKILLed right after its ready line dead before its heartbeat runs out", async () => {
    await pastStartGrace();
    const before = await aliveUntil();
    // Killed before its first timed beat (1.6 s) and its heartbeat thread.
    const after = await killWorker(await cluster.addWorker());
    const lives = [...after].filter(([life]) => !before.has(life));
    expect(lives).toHaveLength(1);
    const [life, lastAliveUntil] = lives[0] as [string, number];
    const foundAt = await awaitFoundDead(life);
    expect(foundAt).not.toBeNull();
    expect(foundAt as number).toBeLessThan(lastAliveUntil);
  }, 60_000);

  it("finds a SIGKILLed worker dead before its heartbeat runs out", async () => {
    await pastStartGrace();
    const worker = cluster.workers[0] as TestProcess;
    const life = await lifeOf(worker);
    await watchedSoon(life);
    await sleep(TTL_MS / 5); // beating again
    const lastAliveUntil = (await killWorker(worker)).get(life);
    expect(lastAliveUntil).toBeDefined();
    const foundAt = await awaitFoundDead(life);
    expect(foundAt).not.toBeNull();
    // Found dead while its last beat still made it alive: its ttl did not find it.
    expect(foundAt as number).toBeLessThan(lastAliveUntil as number);
    // And before its beats were two late (3.2 s): a beat and a quarter (2 s) and a look.
    const lastBeat = (lastAliveUntil as number) - TTL_MS;
    expect((foundAt as number) - lastBeat).toBeLessThan(2 * (TTL_MS / 5));
  }, 60_000);
});
