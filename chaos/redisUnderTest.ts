import { setTimeout as sleep } from "node:timers/promises";
import type { RedisTarget } from "@yiem/core";
import { keySlot } from "@yiem/core/internal";
import {
  redisSupportsCluster,
  startTestRedis,
  startTestRedisCluster,
  type TestRedis,
  type TestRedisCluster,
} from "@yiem/testing";
import { Redis } from "ioredis";

/** How the driver takes Redis down: a crash, or a shutdown that writes no snapshot. */
export type RedisRestartKind = "SIGKILL" | "SHUTDOWN NOSAVE";

/**
 * The Redis of a soak: a private `redis-server` with AOF (`appendonly yes`,
 * `appendfsync always`), or with `--cluster` a 3+3 Redis Cluster. `restart` takes the single
 * server down and starts it again on the same port and AOF folder; `killMaster` SIGKILLs a
 * cluster master that still has a replica (at most three, one per slot range).
 */
export interface RedisUnderTest {
  cluster: boolean;
  target: RedisTarget;
  prefix: string;
  /** The connection environment of every process. */
  env: Record<string, string>;
  /** Takes the single Redis down, waits `downMs`, starts it again (AOF replayed). */
  restart(kind: RedisRestartKind, downMs: number): Promise<void>;
  /** Whether a cluster master with a replica is left to kill. */
  canKillMaster(): boolean;
  /** SIGKILLs a cluster master and waits for its replica to take over. */
  killMaster(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `appendfsync always`: the driver kills Redis with SIGKILL, and the single-Redis guarantees
 * (a finished marker written before its job completes, a response stored before its job
 * completes) assume an acknowledged write survives that. With `everysec`, Redis acknowledges
 * writes it has not written yet whenever a background fsync is slow (it postpones the write
 * up to 2 s), so a kill could lose acknowledged writes: that is a failover's weaker promise,
 * which the `--cluster` soak covers. `always` costs an fsync per event-loop turn; on this
 * soak's load it is not the bottleneck.
 */
const APPEND_FSYNC = "always";

/** Starts the soak's Redis. */
export async function startRedisUnderTest(cluster: boolean): Promise<RedisUnderTest> {
  return cluster ? startCluster() : startSingle();
}

async function startSingle(): Promise<RedisUnderTest> {
  const redis = await startTestRedis({
    privateServer: true,
    appendOnly: true,
    appendFsync: APPEND_FSYNC,
  });
  return {
    cluster: false,
    target: redis.url,
    prefix: redis.prefix,
    env: { REDIS_URL: redis.url },
    restart: (kind, downMs) => restartSingle(redis, kind, downMs),
    canKillMaster: () => false,
    killMaster: async () => {
      throw new Error("killMaster: the soak runs on a single Redis (start it with --cluster)");
    },
    stop: () => redis.stop(),
  };
}

async function restartSingle(redis: TestRedis, kind: RedisRestartKind, downMs: number) {
  if (kind === "SIGKILL") {
    await redis.kill("SIGKILL");
  } else {
    const admin = new Redis(redis.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    admin.on("error", () => undefined);
    await admin.connect();
    await admin.call("SHUTDOWN", "NOSAVE").catch(() => undefined); // the reply is the closed connection
    admin.disconnect();
    await redis.kill("SIGKILL"); // waits for the exit (a no-op once it exited)
  }
  await sleep(downMs);
  await redis.restart();
}

/** A key in each third of the slot space: each lands on a different original master. */
function keysPerSlotRange(): string[] {
  const ranges = [
    [0, 5460],
    [5461, 10922],
    [10923, 16383],
  ] as const;
  return ranges.map(([from, to]) => {
    for (let n = 0; ; n++) {
      const key = `chaos-master-${n}`;
      const slot = keySlot(key);
      if (slot >= from && slot <= to) return key;
    }
  });
}

async function startCluster(): Promise<RedisUnderTest> {
  if (!redisSupportsCluster())
    throw new Error("--cluster needs redis-server and redis-cli 7 or newer with cluster support");
  const cluster: TestRedisCluster = await startTestRedisCluster();
  const victims = keysPerSlotRange();
  return {
    cluster: true,
    target: { clusterNodes: cluster.nodes },
    prefix: cluster.prefix,
    env: { REDIS_CLUSTER_NODES: cluster.nodesEnv },
    restart: async () => {
      throw new Error("restart: a Redis Cluster's nodes are killed with killMaster, not restarted");
    },
    canKillMaster: () => victims.length > 0,
    killMaster: async () => {
      const key = victims.shift();
      if (key === undefined) throw new Error("killMaster: every master with a replica was killed");
      await cluster.killMaster("SIGKILL", key);
      await cluster.waitForState("ok", 60_000);
    },
    stop: () => cluster.stop(),
  };
}
